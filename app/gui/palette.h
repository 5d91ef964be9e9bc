#pragma once
// The application's palette: dark (kept in QSettings as view/dark, so the next start has it)
// or the style's standard one.
namespace fsc {

void applyPalette(bool dark);
bool darkPaletteChosen();  // what the settings say

}  // namespace fsc
