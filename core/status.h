#pragma once
// Status and Result<T>: how errors cross library boundaries. Library code never aborts;
// a failure is a one-line message naming the file, the node and the cause.
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace fsc {

enum class ErrorCode {
    Ok = 0,
    InvalidArgument,  // the caller asked for something impossible
    NotFound,         // a file or a name does not exist
    InvalidModel,     // the model file is malformed or violates ONNX rules
    Unsupported,      // valid but not handled here (op, dtype, feature)
    Io,               // reading or writing failed
    OutOfMemory,      // an allocation the model's sizes asked for failed
    Cancelled,        // the user stopped the work (a Cancel button, a cancel flag); not an error
    Internal,
};

class Status {
public:
    Status() = default;
    Status(ErrorCode code, std::string message) : m_code(code), m_message(std::move(message)) {}

    static Status ok() { return {}; }
    bool isOk() const { return m_code == ErrorCode::Ok; }
    explicit operator bool() const { return isOk(); }
    ErrorCode code() const { return m_code; }
    const std::string& message() const { return m_message; }

    // Prefixes the message with context, e.g. the file name: "model.onnx: <message>".
    // "context: message"; no context (a model built in memory has no path) leaves it as is.
    Status withContext(const std::string& context) const {
        if (isOk() || context.empty()) return *this;
        return {m_code, context + ": " + m_message};
    }

private:
    ErrorCode m_code = ErrorCode::Ok;
    std::string m_message;
};

inline Status invalidModel(std::string message) {
    return {ErrorCode::InvalidModel, std::move(message)};
}

template <typename T>
class Result {
public:
    Result(T value) : m_value(std::move(value)) {}
    Result(Status status) : m_status(std::move(status)) {}

    bool isOk() const { return m_status.isOk(); }
    explicit operator bool() const { return isOk(); }
    const Status& status() const { return m_status; }

    T& value() & { return *m_value; }
    const T& value() const& { return *m_value; }
    T&& value() && { return std::move(*m_value); }
    T* operator->() { return &*m_value; }
    const T* operator->() const { return &*m_value; }
    T& operator*() { return *m_value; }
    const T& operator*() const { return *m_value; }

private:
    std::optional<T> m_value;
    Status m_status;
};

}  // namespace fsc

#define FSC_RETURN_IF_ERROR(expr)               \
    do {                                        \
        ::fsc::Status fsc_status_ = (expr);     \
        if (!fsc_status_.isOk()) return fsc_status_; \
    } while (0)
