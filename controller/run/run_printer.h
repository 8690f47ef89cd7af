// Everything a run prints, in order: IOR's layout (IorReport's text) and
// Lockstep's own lines, each of which starts with '#'. With `ior_text` off
// (commands that print another layout from the RunRecord, lockstep mdtest)
// only the '#' lines of IOR's layout go out; notes always do.
//
// Owns: the IorReport (it remembers which test's header it printed) and the
// text printed so far, which becomes summary.txt.
// Thread: the coordinator's only.
#ifndef LOCKSTEP_CONTROLLER_RUN_RUN_PRINTER_H_
#define LOCKSTEP_CONTROLLER_RUN_RUN_PRINTER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "controller/ior/ior_report.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

class RunPrinter {
 public:
  // `print` (may be empty) receives each piece as it is printed.
  RunPrinter(std::function<void(const std::string&)> print, bool ior_text, bool ior_verbose);

  // The points of a run, as IorReport names them.
  void Header(const v1::RunRecord& run);
  void AgentsReady(const v1::RunRecord& run);
  void TestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first);
  void PhaseDone(const v1::PhaseRecord& phase);
  void FilesRemoved(double seconds, uint32_t iter);
  void TestDone(const v1::TestRecord& test);
  void Footer(const v1::RunRecord& run, const std::string& run_dir);

  // A Lockstep note (a warning, a repeat, an agent lost) as a '#' line.
  void Note(const std::string& text);

  // Everything printed so far.
  const std::string& text() const { return text_; }

 private:
  void Print(const std::string& text);
  // IOR's layout: all of it, or with ior_text off only its '#' lines.
  void PrintIor(const std::string& text);

  const std::function<void(const std::string&)> print_;
  const bool ior_text_;
  IorReport ior_;
  std::string text_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_RUN_PRINTER_H_
