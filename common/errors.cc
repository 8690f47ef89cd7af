#include "common/errors.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_format.h"
#include "common/text_escape.h"

namespace lockstep {

absl::Status WithKind(absl::Status status, v1::ErrorKind kind) {
  if (status.ok()) return status;
  if (kind == v1::ERROR_KIND_UNSPECIFIED) {
    status.ErasePayload(kErrorKindPayloadUrl);
    return status;
  }
  v1::ErrorDetail detail;
  detail.set_kind(kind);
  status.SetPayload(kErrorKindPayloadUrl, absl::Cord(detail.SerializeAsString()));
  return status;
}

v1::ErrorKind KindOf(const absl::Status& status) {
  if (status.ok()) return v1::ERROR_KIND_UNSPECIFIED;
  auto payload = status.GetPayload(kErrorKindPayloadUrl);
  if (!payload) return v1::ERROR_KIND_UNSPECIFIED;
  v1::ErrorDetail detail;
  if (!detail.ParseFromString(std::string(*payload))) return v1::ERROR_KIND_UNSPECIFIED;
  return detail.kind();
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const auto code = static_cast<grpc::StatusCode>(status.code());
  const std::string message(status.message());
  // The payload is the serialized ErrorDetail that WithKind stored.
  auto detail = status.GetPayload(kErrorKindPayloadUrl);
  if (!detail) return grpc::Status(code, message);
  return grpc::Status(code, message, std::string(*detail));
}

absl::Status FromGrpcStatus(const grpc::Status& status, const std::string& address) {
  if (status.ok()) return absl::OkStatus();
  std::string message = status.error_message();
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && message.empty()) {
    message = "no answer before the deadline";
  }
  // An agent's words, for people: escaped for the terminal where they
  // enter (common/text_escape.h).
  absl::Status out(static_cast<absl::StatusCode>(status.error_code()),
                   absl::StrFormat("agent %s: %s", address,
                                   EscapeForTerminalKeepingLines(message)));
  v1::ErrorDetail detail;
  if (!status.error_details().empty() && detail.ParseFromString(status.error_details())) {
    out = WithKind(std::move(out), detail.kind());
  }
  return out;
}

}  // namespace lockstep
