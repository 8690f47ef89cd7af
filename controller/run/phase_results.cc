#include "controller/run/phase_results.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "absl/strings/str_format.h"

namespace lockstep {

void ToControllerClock(int64_t offset_ns, v1::TaskResult* task) {
  using Get = int64_t (v1::TaskResult::*)() const;
  using Set = void (v1::TaskResult::*)(int64_t);
  for (auto [get, set] : std::initializer_list<std::pair<Get, Set>>{
           {&v1::TaskResult::open_start_unix_ns, &v1::TaskResult::set_open_start_unix_ns},
           {&v1::TaskResult::open_stop_unix_ns, &v1::TaskResult::set_open_stop_unix_ns},
           {&v1::TaskResult::rdwr_start_unix_ns, &v1::TaskResult::set_rdwr_start_unix_ns},
           {&v1::TaskResult::rdwr_stop_unix_ns, &v1::TaskResult::set_rdwr_stop_unix_ns},
           {&v1::TaskResult::close_start_unix_ns, &v1::TaskResult::set_close_start_unix_ns},
           {&v1::TaskResult::close_stop_unix_ns, &v1::TaskResult::set_close_stop_unix_ns},
           {&v1::TaskResult::first_io_unix_ns, &v1::TaskResult::set_first_io_unix_ns},
           {&v1::TaskResult::release_unix_ns, &v1::TaskResult::set_release_unix_ns},
           {&v1::TaskResult::readback_start_unix_ns, &v1::TaskResult::set_readback_start_unix_ns},
           {&v1::TaskResult::readback_stop_unix_ns, &v1::TaskResult::set_readback_stop_unix_ns},
           {&v1::TaskResult::stonewall_stop_unix_ns,
            &v1::TaskResult::set_stonewall_stop_unix_ns}}) {
    if ((task->*get)() != 0) (task->*set)((task->*get)() - offset_ns);
  }
}

int64_t StartSkewUncertaintyNs(std::vector<int64_t> clock_uncertainties_ns) {
  if (clock_uncertainties_ns.size() < 2) return 0;
  std::sort(clock_uncertainties_ns.rbegin(), clock_uncertainties_ns.rend());
  return clock_uncertainties_ns[0] + clock_uncertainties_ns[1];
}

}  // namespace lockstep
