#pragma once
// Reads a model for the window: a file, or a Qt resource path (":/...") for the bundled
// sample. Runs on a job's thread; a bad file gives the importer's one-line error.
#include <QString>

#include "core/graph.h"
#include "core/status.h"

namespace fsc {

Result<Model> loadModelFile(const QString& path);

}  // namespace fsc
