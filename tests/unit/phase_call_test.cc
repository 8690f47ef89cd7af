// The Phase call (wire minor 6) between the controller's PhaseCall and the
// agent's real service and core, on a loopback gRPC port with real files:
// Prepare's reply comes first, the start follows as a message; a failed
// Prepare ends the call with its status; a call given up before its start
// leaves the phase prepared; the order prepare-then-start is enforced.
#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "agent/agent_core.h"
#include "agent/agent_service.h"
#include "common/clock.h"
#include "common/errors.h"
#include "controller/run/agent_client.h"
#include "controller/run/phase_stream.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// A real agent (core and service) on a loopback port, attached by a client.
struct Fixture {
  Fixture() {
    AgentOptions o;
    o.roots = {dir.path()};
    o.telemetry = false;
    auto made = AgentCore::Create(o);
    EXPECT_OK(made);
    core = std::move(*made);
    service = MakeAgentService(core.get(), {});
    grpc::ServerBuilder builder;
    ApplyAgentServerOptions(&builder);
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    client = std::make_unique<AgentClient>(absl::StrFormat("127.0.0.1:%d", port), v1::CLIENT,
                                           grpc::InsecureChannelCredentials());
    EXPECT_OK(client->Connect(absl::Seconds(10)));
    v1::AttachRequest a;
    a.set_run_id("run-1");
    a.set_controller("ctl-A");
    a.set_lease_ms(30000);
    auto attached = core->Attach(a);
    EXPECT_OK(attached);
    client->session_id = attached->session_id();
  }
  ~Fixture() { server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5)); }

  // A write phase of 2 tasks in `subdir` of the root.
  v1::PrepareRequest Prepare(const std::string &subdir) const {
    v1::PrepareRequest p;
    p.set_session_id(client->session_id);
    v1::PhaseSpec &s = *p.mutable_spec();
    s.set_phase_id("t0/r0/p");
    s.set_kind(v1::WRITE);
    s.set_file_name("testfile");
    s.set_file_per_process(true);
    s.set_tasks(2);
    s.set_total_tasks(2);
    s.set_transfer_bytes(64 * 1024);
    s.set_block_bytes(256 * 1024);
    s.set_segments(1);
    s.set_dir(subdir);
    return p;
  }
  v1::StartRequest StartIn(absl::Duration lead) const {
    v1::StartRequest st;
    st.set_session_id(client->session_id);
    st.set_phase_id("t0/r0/p");
    st.set_start_at_unix_ns(RealtimeNs() + absl::ToInt64Nanoseconds(lead));
    return st;
  }

  TempDir dir;
  std::unique_ptr<AgentCore> core;
  std::unique_ptr<grpc::Service> service;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<AgentClient> client;
};

TEST(PhaseCall, PreparesThenStartsOnOneCall) {
  Fixture f;
  int answered = 0;
  PhaseCall call(f.client.get(), f.Prepare("."), 0,
                 [&](const AgentClient *, int64_t) { ++answered; });
  ASSERT_TRUE(call.WaitPrepared(absl::Seconds(20)));
  absl::StatusOr<v1::PrepareReply> prepared = call.Prepared();
  ASSERT_OK(prepared);
  EXPECT_EQ(prepared->threads_parked(), 2u);
  EXPECT_EQ(f.core->State(), "prepared");
  EXPECT_EQ(answered, 1);  // the Prepare's reply renewed the lease

  call.SendStart(f.StartIn(absl::Milliseconds(200)));
  ASSERT_TRUE(call.WaitDone(absl::Seconds(20)));
  absl::StatusOr<v1::PhaseResult> result = call.Result();
  ASSERT_OK(result);
  EXPECT_TRUE(result->ok()) << result->error();
  ASSERT_EQ(result->tasks_size(), 2);
  EXPECT_EQ(result->tasks(0).bytes(), 256u * 1024);
  // The start arrived ahead of its instant: the margin the lead adapts to.
  EXPECT_GT(call.start_at_unix_ns(), result->start_received_unix_ns());
  EXPECT_EQ(answered, 2);  // and so did the start's first event
  EXPECT_TRUE(std::filesystem::exists(f.dir.path() + "/testfile.00000000"));
}

TEST(PhaseCall, AFailedPrepareEndsTheCallWithItsStatus) {
  Fixture f;
  PhaseCall call(f.client.get(), f.Prepare("/etc"), 0);
  ASSERT_TRUE(call.WaitPrepared(absl::Seconds(20)));
  absl::StatusOr<v1::PrepareReply> prepared = call.Prepared();
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(KindOf(prepared.status()), v1::PATH_REFUSED) << prepared.status();
  EXPECT_THAT(prepared.status().message(), HasSubstr(f.client->address()));
  EXPECT_TRUE(call.WaitDone(absl::ZeroDuration()));
}

TEST(PhaseCall, ACallGivenUpBeforeItsStartLeavesThePhasePrepared) {
  Fixture f;
  {
    PhaseCall call(f.client.get(), f.Prepare("."), 0);
    ASSERT_TRUE(call.WaitPrepared(absl::Seconds(20)));
    ASSERT_OK(call.Prepared());
  }  // cancelled and ended by its destructor, without a start
  EXPECT_EQ(f.core->State(), "prepared");
  v1::AbortRequest abort;
  abort.set_session_id(f.client->session_id);
  abort.set_phase_id("t0/r0/p");
  ASSERT_OK(f.core->Abort(abort));
  // The agent takes the next phase's call.
  PhaseCall next(f.client.get(), f.Prepare("."), 0);
  ASSERT_TRUE(next.WaitPrepared(absl::Seconds(20)));
  ASSERT_OK(next.Prepared());
  next.SendStart(f.StartIn(absl::Milliseconds(50)));
  ASSERT_TRUE(next.WaitDone(absl::Seconds(20)));
  ASSERT_OK(next.Result());
  EXPECT_TRUE(next.Result()->ok()) << next.Result()->error();
}

// A start before the prepare (a controller that skipped it) is refused.
TEST(PhaseCall, TheAgentRefusesAStartBeforeAPrepare) {
  Fixture f;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto stream = f.client->stub()->Phase(&ctx);
  v1::PhaseCommand command;
  *command.mutable_start() = f.StartIn(absl::Milliseconds(10));
  ASSERT_TRUE(stream->Write(command));
  stream->WritesDone();
  v1::PhaseEvent event;
  EXPECT_FALSE(stream->Read(&event));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("one prepare, then"));
  EXPECT_EQ(f.core->State(), "attached");
}

}  // namespace
}  // namespace lockstep
