// Typed errors: an absl::Status may carry a v1::ErrorKind (proto/agent.proto)
// as a payload, and the kind crosses the wire in the gRPC status details, so
// that the controller acts on what went wrong (session gone, busy, no space,
// ...) without reading message text. The message stays for people.
//
//   agent:      return WithKind(absl::FailedPreconditionError("busy: ..."),
//                               v1::BUSY);          // → ToGrpcStatus
//   controller: absl::Status s = FromGrpcStatus(reply_status, "10.0.0.5:7070");
//               if (KindOf(s) == v1::SESSION_GONE) ...
#ifndef LOCKSTEP_COMMON_ERRORS_H_
#define LOCKSTEP_COMMON_ERRORS_H_

#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The payload URL under which the kind is stored in an absl::Status.
inline constexpr char kErrorKindPayloadUrl[] = "type.googleapis.com/lockstep.v1.ErrorDetail";

// `status` with `kind` attached (replacing any kind it had). OK stays OK.
absl::Status WithKind(absl::Status status, v1::ErrorKind kind);

// The kind attached to `status`; ERROR_KIND_UNSPECIFIED when none (or OK).
v1::ErrorKind KindOf(const absl::Status& status);

// Agent → wire: code and message as they are, the kind (if any) as a
// serialized v1::ErrorDetail in the status details.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Wire → controller: the message prefixed "agent ADDRESS: " and escaped
// for the terminal (newlines kept: common/text_escape.h), the code and the
// kind kept. An empty DEADLINE_EXCEEDED message says what happened.
absl::Status FromGrpcStatus(const grpc::Status& status, const std::string& address);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_ERRORS_H_
