#pragma once
// The heat colours of the run overlay: pale yellow for little time through orange to dark
// red for the most (a sequential ramp that reads in both palettes and in greyscale prints).
namespace fsc {

// `t` in [0, 1] (clamped) to 0xRRGGBB.
unsigned heatColor(double t);

}  // namespace fsc
