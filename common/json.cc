#include "common/json.h"

#include <google/protobuf/util/json_util.h>

namespace lockstep {
namespace {

std::string Print(const google::protobuf::Message& message,
                  google::protobuf::util::JsonPrintOptions options) {
  options.preserve_proto_field_names = true;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) return "{}";
  return out;
}

}  // namespace

std::string ToJson(const google::protobuf::Message& message, bool pretty) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = pretty;
  options.always_print_primitive_fields = true;
  return Print(message, options);
}

std::string ToJsonSetFieldsOnly(const google::protobuf::Message& message) {
  return Print(message, {});
}

}  // namespace lockstep
