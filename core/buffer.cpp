#include "core/buffer.h"

#include "core/out_of_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fsc {
namespace {

class StringBuffer final : public Buffer {
public:
    explicit StringBuffer(std::string bytes) : m_bytes(std::move(bytes)) {}
    const uint8_t* data() const override {
        return reinterpret_cast<const uint8_t*>(m_bytes.data());
    }
    size_t size() const override { return m_bytes.size(); }

private:
    std::string m_bytes;
};

class MappedBuffer final : public Buffer {
public:
    MappedBuffer(void* address, size_t size) : m_address(address), m_size(size) {}
    ~MappedBuffer() override {
        if (m_address) munmap(m_address, m_size);
    }
    const uint8_t* data() const override { return static_cast<const uint8_t*>(m_address); }
    size_t size() const override { return m_size; }

private:
    void* m_address;
    size_t m_size;
};

}  // namespace

BufferPtr makeBuffer(std::string bytes) {
    return std::make_shared<StringBuffer>(std::move(bytes));
}

Result<BufferPtr> mapFile(const std::filesystem::path& path, bool prefault) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return Status(errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Io,
                      std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status(ErrorCode::Io, "not a regular file");
    }
    size_t size = static_cast<size_t>(st.st_size);
    if (size == 0) {
        ::close(fd);
        return makeBuffer({});
    }
    void* address = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (prefault ? MAP_POPULATE : 0), fd, 0);
    int mapErrno = errno;
    ::close(fd);
    if (address == MAP_FAILED && mapErrno == ENOMEM)  // no address space left for it
        return Status(ErrorCode::OutOfMemory, "out of memory: " + bytesText(double(size)) + " to map the file");
    if (address == MAP_FAILED)
        return Status(ErrorCode::Io, std::string("cannot map: ") + std::strerror(mapErrno));
    return BufferPtr(std::make_shared<MappedBuffer>(address, size));
}

}  // namespace fsc
