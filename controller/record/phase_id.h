// The id of one phase of a run: its test, its repetition and its name. On
// the wire and in run.json it is the text "t<test>/r<rep>/<name>"
// (PhaseSpec.phase_id); this is the one place that text is made and read.
#ifndef LOCKSTEP_CONTROLLER_RECORD_PHASE_ID_H_
#define LOCKSTEP_CONTROLLER_RECORD_PHASE_ID_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

namespace lockstep {

struct PhaseId {
  uint32_t test = 0;
  uint32_t rep = 0;
  std::string phase;  // the plan's phase name

  // "t2/r0/seq-write".
  std::string str() const;
  // The id of `text` as str() writes it; nullopt for anything else.
  static std::optional<PhaseId> Parse(std::string_view text);

  bool operator==(const PhaseId& o) const {
    return std::tie(test, rep, phase) == std::tie(o.test, o.rep, o.phase);
  }
  bool operator<(const PhaseId& o) const {
    return std::tie(test, rep, phase) < std::tie(o.test, o.rep, o.phase);
  }
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_PHASE_ID_H_
