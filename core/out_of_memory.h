#pragma once
// Running out of memory is bad input, not a bug: a model's sizes (its weights, a dim given
// on the command line) decide how much is asked for. Allocations a model controls throw
// OutOfMemory, naming what they were for; the executor and the importer turn it (and any
// other std::bad_alloc) into a Status, so a user sees one line instead of a signal.
#include <cstdint>
#include <new>
#include <string>

#include "core/status.h"
#include "core/units.h"

namespace fsc {

class OutOfMemory : public std::bad_alloc {
public:
    // `purpose`: what the bytes were for, e.g. "a float32[512,64,112,112] tensor".
    OutOfMemory(size_t bytes, const std::string& purpose)
        : m_message("out of memory: " + bytesText(double(bytes)) + " for " + purpose) {}
    const char* what() const noexcept override { return m_message.c_str(); }

private:
    std::string m_message;
};

// The Status for a caught allocation failure: OutOfMemory's own words, or a plain one.
inline Status outOfMemoryStatus(const std::bad_alloc& e) {
    if (const auto* oom = dynamic_cast<const OutOfMemory*>(&e)) return {ErrorCode::OutOfMemory, oom->what()};
    return {ErrorCode::OutOfMemory, "out of memory"};
}

}  // namespace fsc
