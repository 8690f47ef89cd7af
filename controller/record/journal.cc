#include "controller/record/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "common/json.h"
#include "controller/record/run_status.h"

namespace lockstep {
namespace {

// A later version's fields are left out, not the line: what this version
// knows of it still counts.
bool ParseLine(absl::string_view line, google::protobuf::Message* out) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  return google::protobuf::util::JsonStringToMessage(std::string(line), out, options).ok();
}

// A mark's line: set fields only, so that a version before a field was
// added (whose parser refuses unknown fields) still reads the line while
// the field is empty: `lockstep report` of 4bac8e3 read every run_end line
// as torn once RunEnd had lost_agents, printed empty.
std::string MarkLine(const v1::JournalMark& mark) { return ToJsonSetFieldsOnly(mark); }

// The mark of a line that starts as JournalMark prints (its one key first),
// nullopt for a PhaseRecord or a torn line.
std::optional<v1::JournalMark> ParseMark(absl::string_view line) {
  if (!absl::StartsWith(line, "{\"run_end\"") && !absl::StartsWith(line, "{\"test_start\"") &&
      !absl::StartsWith(line, "{\"files_removed\"")) {
    return std::nullopt;
  }
  v1::JournalMark mark;
  if (!ParseLine(line, &mark) || mark.mark_case() == v1::JournalMark::MARK_NOT_SET) {
    return std::nullopt;
  }
  return mark;
}

// An older journal's test, begun from its first phase line.
void BeginFromPhase(const v1::PhaseRecord& p, v1::TestRecord* t) {
  t->set_test_id(p.spec().test_id());
  t->set_tasks_per_agent(p.spec().tasks());
  t->set_total_tasks(p.spec().total_tasks());
  t->set_client_agents(p.spec().tasks() ? p.spec().total_tasks() / p.spec().tasks() : 0);
  // IOR's StartTime: the test started just before its first Prepare.
  if (p.prepare_sent_unix_ns() > 0) t->set_started_at(FormatRfc3339(p.prepare_sent_unix_ns()));
}

// What an older journal's test knew from the plan, as its lines tell it.
void CompleteInferred(v1::TestRecord* t) {
  std::set<std::string> seen;
  uint32_t reps = 0;
  for (const v1::PhaseRecord& p : t->phases()) {
    reps = std::max(reps, p.repetition() + 1);
    if (seen.insert(p.phase()).second) *t->add_plan_specs() = p.spec();
  }
  t->set_repetitions(reps);
}

}  // namespace

std::string JournalTestStartLine(const v1::TestRecord& test) {
  v1::JournalMark line;
  v1::TestRecord* header = line.mutable_test_start();
  *header = test;
  header->clear_phases();
  header->clear_summary();
  header->clear_layers();
  return MarkLine(line);
}

std::string JournalFilesRemovedLine(const v1::PhaseRecord& phase) {
  v1::JournalMark line;
  v1::FilesRemoved* removed = line.mutable_files_removed();
  removed->set_phase_id(phase.phase_id());
  removed->set_attempts(phase.attempts());
  *removed->mutable_row() = phase.remove_row();
  return MarkLine(line);
}

std::string JournalEndLine(const v1::RunEnd& end) {
  v1::JournalMark line;
  *line.mutable_run_end() = end;
  return MarkLine(line);
}

std::optional<v1::RunEnd> ParseJournalEndLine(absl::string_view line) {
  std::optional<v1::JournalMark> mark = ParseMark(line);
  if (!mark || !mark->has_run_end()) return std::nullopt;
  return mark->run_end();
}

bool JournalIsHeld(const std::string& run_dir) {
  const std::string path = run_dir + "/journal.jsonl";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // and with it the shared lock, if it was taken
  return held;
}

ReplayedJournal ReplayJournal(absl::string_view text, v1::RunRecord* run) {
  ReplayedJournal out;
  std::map<uint32_t, int> test_at;  // test id -> index in run->tests
  auto test_of = [&](uint32_t id) -> v1::TestRecord* {
    auto it = test_at.find(id);
    return it == test_at.end() ? nullptr : run->mutable_tests(it->second);
  };
  v1::PhaseRecord* last = nullptr;  // the phase line read last
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (std::optional<v1::JournalMark> mark = ParseMark(line)) {
      if (mark->has_run_end()) {
        out.end = mark->run_end();
      } else if (mark->has_files_removed()) {
        const v1::FilesRemoved& r = mark->files_removed();
        if (last != nullptr && last->phase_id() == r.phase_id() &&
            last->attempts() == r.attempts()) {
          *last->mutable_remove_row() = r.row();
        }
      } else if (test_of(mark->test_start().test_id()) == nullptr) {
        test_at[mark->test_start().test_id()] = run->tests_size();
        run->add_tests()->Swap(mark->mutable_test_start());
      }
      continue;
    }
    v1::PhaseRecord p;
    // A line no phase (a later version's mark of a kind this one does not
    // know reads as an empty record) is left out as one that does not parse.
    if (!ParseLine(line, &p) || p.phase_id().empty()) {
      ++out.torn_lines;
      continue;
    }
    v1::TestRecord* t = test_of(p.spec().test_id());
    if (t == nullptr) {
      out.inferred_tests.insert(p.spec().test_id());
      test_at[p.spec().test_id()] = run->tests_size();
      t = run->add_tests();
      BeginFromPhase(p, t);
    }
    KeepFailedVerificationFiles(p, run);  // as the live run
    last = t->add_phases();
    *last = std::move(p);
  }
  for (uint32_t id : out.inferred_tests) CompleteInferred(test_of(id));
  return out;
}

}  // namespace lockstep
