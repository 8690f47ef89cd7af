#include "common/wire_version.h"

#include "absl/strings/str_format.h"
#include "common/errors.h"

namespace lockstep {
namespace {

uint32_t EffectiveMajor(uint32_t major) { return major == 0 ? 1 : major; }

std::string Describe(const char* who, const WireVersion& v) {
  return absl::StrFormat("%s lockstep %s (wire protocol %u.%u)", who,
                         v.release.empty() ? "of unknown release" : v.release,
                         EffectiveMajor(v.major), v.minor);
}

}  // namespace

WireVersion OwnWireVersion() { return {kWireMajor, kWireMinor, LOCKSTEP_VERSION}; }

absl::Status CheckWireVersions(const WireVersion& controller, const WireVersion& agent,
                               const std::string& agent_where) {
  const uint32_t cm = EffectiveMajor(controller.major);
  const uint32_t am = EffectiveMajor(agent.major);
  if (cm == am) return absl::OkStatus();
  const std::string fix =
      cm > am ? absl::StrFormat("upgrade the agent on %s to a lockstep release that speaks wire "
                                "protocol %u (the controller's), or run the controller of a "
                                "release that speaks %u",
                                agent_where, cm, am)
              : absl::StrFormat("upgrade the controller to a lockstep release that speaks wire "
                                "protocol %u (the agent's on %s), or run agents of a release "
                                "that speaks %u",
                                am, agent_where, cm);
  return WithKind(absl::FailedPreconditionError(absl::StrFormat(
                      "version mismatch: %s and %s on %s cannot work together (wire protocol "
                      "majors differ); %s",
                      Describe("controller", controller), Describe("agent", agent),
                      agent_where, fix)),
                  v1::VERSION_MISMATCH);
}

}  // namespace lockstep
