// Text for a terminal (common/text_escape.h) and the agent's text escaped
// where it enters the controller (controller/run/agent_text.h): escape
// sequences, C1 controls, bidirectional overrides and bytes that are not
// UTF-8 become visible escapes; lines are kept where the text is a
// program's output; the fields the controller acts on are left alone.
#include "common/text_escape.h"

#include <grpcpp/grpcpp.h>

#include <string>

#include "common/errors.h"
#include "controller/run/agent_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(TextEscape, ControlsBidiAndBadBytesBecomeEscapes) {
  EXPECT_EQ(EscapeForTerminal("plain text, ünïcode ✓"), "plain text, ünïcode ✓");
  EXPECT_EQ(EscapeForTerminal("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(EscapeForTerminal("l1\nl2\tx\r"), "l1\\x0al2\\x09x\\x0d");
  EXPECT_EQ(EscapeForTerminal("\x7f"), "\\x7f");
  EXPECT_EQ(EscapeForTerminal("\xc2\x9b" "31m"), "\\u009b31m");       // C1 CSI
  EXPECT_EQ(EscapeForTerminal("abc\xe2\x80\xae" "def"), "abc\\u202edef");  // RLO
  EXPECT_EQ(EscapeForTerminal("bad \xff byte"), "bad \\xff byte");
  EXPECT_EQ(EscapeForTerminal("back\\slash"), "back\\slash");
  EXPECT_TRUE(HasControlCharacters("x\x1b"));
  EXPECT_FALSE(HasControlCharacters("x y ✓"));
}

TEST(TextEscape, KeepingLinesKeepsNewlinesAndTabsOnly) {
  EXPECT_EQ(EscapeForTerminalKeepingLines("l1\nl2\tx\r\x1b]0;t\x07"),
            "l1\nl2\tx\\x0d\\x1b]0;t\\x07");
  std::string clean = "nothing\nto do\t✓";
  EscapeInPlaceKeepingLines(&clean);
  EXPECT_EQ(clean, "nothing\nto do\t✓");
  std::string loud = "a\x1b[2J\nb\xff";
  EscapeInPlaceKeepingLines(&loud);
  EXPECT_EQ(loud, "a\\x1b[2J\nb\\xff");
}

TEST(AgentText, APhaseResultsTextIsEscapedAndNothingElse) {
  v1::PhaseResult r;
  r.set_error("task 0: \x1b[2Jgone");
  r.set_start_note("note\x1b");
  v1::TaskResult* t = r.add_tasks();
  t->set_error("err\xe2\x80\xae");
  t->set_bytes(4096);
  t->mutable_command()->set_stdout_tail("out\x1b[31m\nline 2\n");
  t->mutable_command()->add_argv("/bin/\x1b");  // what the plan asked for: the controller's own
  r.mutable_telemetry()->add_top_processes()->set_name("\x1b[2Jevil");
  r.mutable_telemetry()->add_warnings("w\x07");
  EscapeAgentText(&r);
  EXPECT_EQ(r.error(), "task 0: \\x1b[2Jgone");
  EXPECT_EQ(r.start_note(), "note\\x1b");
  EXPECT_EQ(r.tasks(0).error(), "err\\u202e");
  EXPECT_EQ(r.tasks(0).bytes(), 4096u);
  EXPECT_EQ(r.tasks(0).command().stdout_tail(), "out\\x1b[31m\nline 2\n");
  EXPECT_EQ(r.tasks(0).command().argv(0), "/bin/\x1b");
  EXPECT_EQ(r.telemetry().top_processes(0).name(), "\\x1b[2Jevil");
  EXPECT_EQ(r.telemetry().warnings(0), "w\\x07");
}

TEST(AgentText, FactsAndRepliesKeepWhatThePlanIsCheckedAgainst) {
  v1::HostFacts f;
  f.set_hostname("node\x1b[1m");
  f.set_kernel("6.1\x1b");
  f.add_roots()->set_path("/data/\x1b");
  f.add_allowed_commands("/bin/\x1b");
  (*f.mutable_extra())["k"] = "v\x1b";
  EscapeAgentText(&f);
  EXPECT_EQ(f.hostname(), "node\\x1b[1m");
  EXPECT_EQ(f.kernel(), "6.1\\x1b");
  EXPECT_EQ(f.roots(0).path(), "/data/\x1b");
  EXPECT_EQ(f.allowed_commands(0), "/bin/\x1b");
  EXPECT_EQ(f.extra().at("k"), "v\\x1b");

  v1::PrepareReply p;
  p.set_stripe_layout("stripe_count: 1\x1b");
  p.set_net_address("10.0.0.1\x1b");
  p.add_files("/data/f\x1b");
  EscapeAgentText(&p);
  EXPECT_EQ(p.stripe_layout(), "stripe_count: 1\\x1b");
  EXPECT_EQ(p.net_address(), "10.0.0.1\x1b");
  EXPECT_EQ(p.files(0), "/data/f\x1b");

  v1::CacheReply c;
  c.set_warning("cannot drop\x1b");
  c.add_daemon_caches("osd.0 \x1b");
  EscapeAgentText(&c);
  EXPECT_EQ(c.warning(), "cannot drop\\x1b");
  EXPECT_EQ(c.daemon_caches(0), "osd.0 \\x1b");
}

TEST(AgentText, AnAgentsErrorMessageIsEscapedWithItsKindKept) {
  const absl::Status s = FromGrpcStatus(
      ToGrpcStatus(WithKind(absl::FailedPreconditionError("busy\x1b[2J\nsecond line"), v1::BUSY)),
      "10.0.0.5:7070");
  EXPECT_EQ(s.message(), "agent 10.0.0.5:7070: busy\\x1b[2J\nsecond line");
  EXPECT_EQ(KindOf(s), v1::BUSY);
  EXPECT_TRUE(absl::IsFailedPrecondition(s));
}

}  // namespace
}  // namespace lockstep
