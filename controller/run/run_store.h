// The results directory of one run: <out>/<run-id>/ with plan.toml (copy),
// journal.jsonl (one finished phase per line, fsynced), run.json (one line,
// no indentation: `jq .` shows it indented) and summary.txt (both written
// atomically), and telemetry.jsonl.gz (the agents'
// full host telemetry, one v1::TelemetryLine per agent and phase, gzip;
// run.json keeps a brief per agent and per role). A run never overwrites
// another.
#ifndef LOCKSTEP_CONTROLLER_RUN_RUN_STORE_H_
#define LOCKSTEP_CONTROLLER_RUN_RUN_STORE_H_

#include <memory>
#include <string>

#include <google/protobuf/message.h>

#include "absl/status/statusor.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

inline constexpr char kTelemetryFile[] = "telemetry.jsonl.gz";

class RunStore {
 public:
  // Creates <out_dir>/<run-id>/ (out_dir too, if missing) and copies the plan.
  static absl::StatusOr<std::unique_ptr<RunStore>> Create(const std::string& out_dir,
                                                          const std::string& run_name,
                                                          const std::string& plan_text);
  ~RunStore();

  const std::string& run_id() const { return run_id_; }
  const std::string& dir() const { return dir_; }

  // Moves every AgentPhaseRecord.telemetry of `phase` to telemetry.jsonl.gz
  // (cleared in `phase` even when the write fails, which is the error).
  absl::Status MoveTelemetryOut(v1::PhaseRecord* phase);
  absl::Status AppendJournal(const v1::PhaseRecord& phase);
  absl::Status WriteRunJson(const v1::RunRecord& run);
  absl::Status WriteSummary(const std::string& text);

 private:
  RunStore() = default;
  std::string run_id_;
  std::string dir_;
  int journal_fd_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_RUN_STORE_H_
