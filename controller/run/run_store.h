// The results directory of one run: <out>/<run-id>/ with plan.toml (copy),
// journal.jsonl (record/journal.h: a line as each test begins and as each
// phase ends, and one as the run ends; each fsynced), run.json (one line, no
// indentation: `jq .` shows it indented; written atomically; the coordinator
// writes summary.txt beside it with WriteSummaryTxt), and telemetry.pb.gz
// (the agents' full host telemetry, one v1::TelemetryLine per agent and
// phase, length-delimited protobuf, gzip; run.json keeps a brief per agent
// and per role). A run never overwrites another. The store holds an
// exclusive flock on journal.jsonl while it is open: a reader tells a live
// run from one whose controller died (record/journal.h JournalIsHeld).
//
// Memory stays bounded over a run's phases: JournalAndOffload moves each
// finished phase's per-agent records (AgentPhaseRecord: tasks, series,
// briefs) out of the in-memory RunRecord into a spool file in the run
// directory (.agents.spool, removed by the destructor), and WriteRunJson
// streams run.json to disk, splicing every phase's agents back from the
// spool one phase at a time. The in-memory record the coordinator keeps is
// then light: phase-level fields only (reports that need a phase's agents
// keep them from its OnPhaseDone event: record/run_observer.h PhaseAgents).
#ifndef LOCKSTEP_CONTROLLER_RUN_RUN_STORE_H_
#define LOCKSTEP_CONTROLLER_RUN_RUN_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <google/protobuf/message.h>

#include "absl/status/statusor.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {


// A JSON object's text cut where the elements of its array `key` go:
// prefix ends with `"key":[`, suffix starts with `]`. The object printed
// with `key` empty (ToJson prints `"key":[]`; if absent, the key is added
// at the end). Only the object's own member counts: a nested object's
// member of the same name (IOzone's report has `tests` too) or a string
// holding the text does not. Exposed for tests.
struct JsonSplit {
  std::string prefix;
  std::string suffix;
};
JsonSplit SplitJsonAt(const std::string& object_json, const std::string& key);

class RunStore {
 public:
  // Creates <out_dir>/<run-id>/ (out_dir too, if missing) and copies the plan;
  // the run id is UTC start second, the run name and 48 random bits.
  // PermissionDenied naming out_dir, its owner and mode when another
  // account than ours and root could rename entries in it (it owns it, or
  // may write it and the sticky bit is not set: /tmp is fine).
  static absl::StatusOr<std::unique_ptr<RunStore>> Create(const std::string& out_dir,
                                                          const std::string& run_name,
                                                          const std::string& plan_text);
  ~RunStore();

  const std::string& run_id() const { return run_id_; }
  const std::string& dir() const { return dir_; }

  // Moves every AgentPhaseRecord.telemetry of `phase` to telemetry.pb.gz
  // (cleared in `phase` even when the write fails, which is the error).
  absl::Status MoveTelemetryOut(v1::PhaseRecord* phase);
  absl::Status AppendJournal(const v1::PhaseRecord& phase);
  // The test's header as it begins (record/journal.h), so that a rebuild
  // from the journal has the test as the run began it.
  absl::Status AppendTestStart(const v1::TestRecord& test);
  // IOR's remove row of `phase`, set after `phase` was journaled.
  absl::Status AppendFilesRemoved(const v1::PhaseRecord& phase);
  // The journal's last line: how the run ended (record/run_status.h), so
  // that a rebuild from the journal gives the run's status.
  absl::Status AppendRunEnd(const v1::RunEnd& end);
  // Appends `phase` to the journal (as AppendJournal), then offloads its
  // agents to the spool: `phase` keeps no AgentPhaseRecord and WriteRunJson
  // restores them. Phase-level fields set later (a remove row) still reach
  // run.json. If the spool cannot be written, `phase` keeps its agents (and
  // the error says so).
  absl::Status JournalAndOffload(v1::PhaseRecord* phase);
  // run.json, streamed (a phase at a time) and renamed into place.
  absl::Status WriteRunJson(const v1::RunRecord& run);
  // run-start.json: the run as known when its agents are ready (started_at,
  // command lines, agents; no tests), so that `lockstep report` can rebuild
  // a run that never wrote run.json with its header and agent lines.
  absl::Status WriteRunStart(const v1::RunRecord& run);

 private:
  RunStore() = default;
  std::string run_id_;
  std::string dir_;
  // The spool: agents of offloaded phases, each phase's agents as the JSON
  // array's elements; key: phase_id + '#' + attempts.
  struct Span {
    int64_t offset = 0;
    int64_t length = 0;
  };
  absl::Status AppendJournalLine(const std::string& line);  // fsynced
  absl::Status Spool(const v1::PhaseRecord& phase, const std::string& agents_json);
  absl::Status ReadSpan(const Span& span, std::string* out) const;
  absl::Status WriteRunJsonTo(const v1::RunRecord& run, int fd, const std::string& tmp) const;
  absl::Status WritePhaseJson(const v1::PhaseRecord& phase, int fd, const std::string& tmp) const;

  int journal_fd_ = -1;
  int spool_fd_ = -1;
  int64_t spool_size_ = 0;
  std::map<std::string, Span> spooled_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_RUN_STORE_H_
