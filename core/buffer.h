#pragma once
// Immutable byte storage shared between tensors and graph snapshots. Weights either live in
// memory (moved out of the parsed protobuf, never copied) or are mapped from an external
// data file, so a multi-gigabyte model costs no reads until its bytes are used.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/status.h"

namespace fsc {

class Buffer {
public:
    virtual ~Buffer() = default;
    virtual const uint8_t* data() const = 0;
    virtual size_t size() const = 0;
};

using BufferPtr = std::shared_ptr<const Buffer>;

// Takes ownership of a string's bytes (protobuf's raw_data is a std::string).
BufferPtr makeBuffer(std::string bytes);

// Maps a whole file read-only. Empty files give an empty buffer. `prefault` reads the
// pages in at once, which is faster when every byte is about to be parsed anyway.
Result<BufferPtr> mapFile(const std::filesystem::path& path, bool prefault = false);

}  // namespace fsc
