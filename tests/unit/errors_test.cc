// Typed errors (common/errors.h): the kind survives Annotate, the trip to a
// grpc::Status and back, and old run.json keys still parse after the unit
// renames (json_name in the proto).
#include "common/errors.h"

#include <gtest/gtest.h>
#include <google/protobuf/util/json_util.h>

#include "common/status_macros.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {
namespace {

TEST(ErrorsTest, KindRidesOnTheStatusAndSurvivesAnnotate) {
  absl::Status s = WithKind(absl::FailedPreconditionError("busy: run r1"), v1::BUSY);
  EXPECT_EQ(KindOf(s), v1::BUSY);
  absl::Status annotated = Annotate(s, "attach");
  EXPECT_EQ(KindOf(annotated), v1::BUSY);
  EXPECT_EQ(annotated.message(), "attach: busy: run r1");
  EXPECT_EQ(KindOf(absl::FailedPreconditionError("busy: but untyped")), v1::ERROR_KIND_UNSPECIFIED);
  EXPECT_EQ(KindOf(WithKind(absl::OkStatus(), v1::BUSY)), v1::ERROR_KIND_UNSPECIFIED);
  EXPECT_EQ(KindOf(WithKind(s, v1::ERROR_KIND_UNSPECIFIED)), v1::ERROR_KIND_UNSPECIFIED);
}

TEST(ErrorsTest, KindCrossesTheWire) {
  absl::Status agent_side = WithKind(absl::ResourceExhaustedError("needs 4 GiB"), v1::NO_SPACE);
  grpc::Status wire = ToGrpcStatus(agent_side);
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(wire.error_message(), "needs 4 GiB");
  absl::Status controller_side = FromGrpcStatus(wire, "10.0.0.5:7070");
  EXPECT_EQ(controller_side.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(controller_side.message(), "agent 10.0.0.5:7070: needs 4 GiB");
  EXPECT_EQ(KindOf(controller_side), v1::NO_SPACE);
}

TEST(ErrorsTest, UntypedAndGarbledDetailsGiveNoKind) {
  absl::Status plain = FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down"), "h:1");
  EXPECT_EQ(KindOf(plain), v1::ERROR_KIND_UNSPECIFIED);
  absl::Status garbled =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::INTERNAL, "x", std::string("\xff\xff", 2)), "h:1");
  EXPECT_EQ(KindOf(garbled), v1::ERROR_KIND_UNSPECIFIED);
  absl::Status deadline =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, ""), "h:1");
  EXPECT_EQ(deadline.message(), "agent h:1: no answer before the deadline");
}

TEST(ErrorsTest, RunJsonOfEarlierVersionsStillParses) {
  // Before the unit renames, instants were "..._ns"; json_name keeps them.
  const std::string old_json = R"({"phase_id":"p1","start_at_ns":"17","prepared_ns":"18",
    "agents":[{"tasks":[{"open_start_ns":"5","first_io_ns":"6","release_ns":"7"}]}]})";
  v1::PhaseRecord phase;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(old_json, &phase).ok());
  EXPECT_EQ(phase.start_at_unix_ns(), 17);
  EXPECT_EQ(phase.prepared_unix_ns(), 18);
  ASSERT_EQ(phase.agents_size(), 1);
  EXPECT_EQ(phase.agents(0).tasks(0).open_start_unix_ns(), 5);
  EXPECT_EQ(phase.agents(0).tasks(0).first_io_unix_ns(), 6);
  EXPECT_EQ(phase.agents(0).tasks(0).release_unix_ns(), 7);
  const std::string new_json = R"({"start_at_unix_ns":"19"})";
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(new_json, &phase).ok());
  EXPECT_EQ(phase.start_at_unix_ns(), 19);
}

}  // namespace
}  // namespace lockstep
