// A kind's plain keys as one table, as fio's engines declare their options
// (struct fio_option: a name, a type, the member it fills, its limits). A
// row says how the plan names a key, how it is read (type and limits), the
// member of the kind's struct (KIND_plan.h) it fills, whether PlanToToml
// writes it back at 0 or false, whether a sweep may vary it, and the
// PhaseSpec setter that carries it to the agents. A kind derives from its
// table what it would otherwise list five times (OwnKeys, SweptKeys,
// ReadKeys, WriteToml, FillSpec), so a new plain key is one row. Keys with
// rules of their own (an operation's name, a value checked against another,
// a spec field computed from several) stay in the kind's code.
//
//   const KeyTable<SeeksPlan> keys_ = KeyTable<SeeksPlan>()
//       .Uint("seeks", &SeeksPlan::seeks, 1, kMaxSeeksPerTask, &v1::PhaseSpec::set_seeks_per_task)
//       .Uint32("seek_rewrite_pct", &SeeksPlan::seek_rewrite_pct, 0, 100,
//               &v1::PhaseSpec::set_seek_rewrite_pct, {.write_zero = true});
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_KEY_TABLE_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_KEY_TABLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "controller/plan/phase_kind.h"
#include "controller/plan/plan.h"
#include "controller/plan/table_reader.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep::kinds {

struct KeyOptions {
  bool swept = false;       // a sweep may list values for it (SweptKeys)
  bool write_zero = false;  // PlanToToml writes it at 0 or false too
};

template <typename Own>
class KeyTable {
 public:
  using Spec = v1::PhaseSpec;

  // An integer in [min, max]. A null `set`: the kind fills the spec itself.
  KeyTable&& Uint(const char* key, uint64_t Own::*member, uint64_t min, uint64_t max,
                  void (Spec::*set)(uint64_t), KeyOptions o = {}) && {
    return Add<uint64_t>(key, member, set, o, [key, member, min, max](const TableReader& r,
                                                                      Own* own) {
      return r.Uint(key, min, max, &(own->*member));
    });
  }
  KeyTable&& Uint32(const char* key, uint32_t Own::*member, uint32_t min, uint32_t max,
                    void (Spec::*set)(uint32_t), KeyOptions o = {}) && {
    return Add<uint32_t>(key, member, set, o, [key, member, min, max](const TableReader& r,
                                                                      Own* own) {
      return r.Uint32(key, min, max, &(own->*member));
    });
  }
  // A size: bytes, or a string with a unit ("4k", "1MiB"); > 0.
  KeyTable&& Size(const char* key, uint64_t Own::*member, void (Spec::*set)(uint64_t),
                  KeyOptions o = {}) && {
    return Add<uint64_t>(key, member, set, o, [key, member](const TableReader& r, Own* own) {
      return r.Size(key, &(own->*member));
    });
  }
  KeyTable&& Bool(const char* key, bool Own::*member, void (Spec::*set)(bool),
                  KeyOptions o = {}) && {
    return Add<bool>(key, member, set, o, [key, member](const TableReader& r, Own* own) {
      return r.Bool(key, &(own->*member));
    });
  }

  // The keys, in the table's order (OwnKeys).
  std::vector<std::string> Keys() const {
    std::vector<std::string> keys;
    for (const Row& row : rows_) keys.push_back(row.key);
    return keys;
  }
  // The swept ones, in the table's order (SweptKeys).
  std::vector<SweptKey> Swept() const {
    std::vector<SweptKey> swept;
    for (const Row& row : rows_) {
      if (row.swept) swept.push_back({row.key, row.copy});
    }
    return swept;
  }
  // Reads every key present in `r` into *own, in the table's order; the
  // first error (naming the key, its line and the fix) ends it. An absent
  // key leaves its member as it is.
  absl::Status Read(const TableReader& r, Own* own) const {
    for (const Row& row : rows_) {
      if (absl::Status s = row.read(r, own); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  void Write(const Own& own, TomlLines* out) const {
    for (const Row& row : rows_) row.write(own, out);
  }
  void Fill(const Own& own, Spec* spec) const {
    for (const Row& row : rows_) {
      if (row.fill) row.fill(own, spec);
    }
  }

 private:
  struct Row {
    std::string key;
    bool swept = false;
    std::function<absl::Status(const TableReader&, Own*)> read;
    std::function<void(const Own&, TomlLines*)> write;
    std::function<void(const Own&, Spec*)> fill;  // empty: the kind fills it
    std::function<void(const PhasePlan& from, PhasePlan* to)> copy;
  };

  template <typename T, typename Read>
  KeyTable&& Add(const char* key, T Own::*member, void (Spec::*set)(T), KeyOptions o,
                 Read read) {
    Row row{.key = key, .swept = o.swept, .read = std::move(read)};
    const bool zero = o.write_zero;
    row.write = [key, member, zero](const Own& own, TomlLines* out) {
      if constexpr (std::is_same_v<T, bool>) {
        zero ? out->BoolAlways(key, own.*member) : out->Bool(key, own.*member);
      } else {
        zero ? out->UintAlways(key, own.*member) : out->Uint(key, own.*member);
      }
    };
    if (set != nullptr) {
      row.fill = [member, set](const Own& own, Spec* spec) { (spec->*set)(own.*member); };
    }
    row.copy = [member](const PhasePlan& from, PhasePlan* to) {
      to->Own<Own>().*member = from.Own<Own>().*member;
    };
    rows_.push_back(std::move(row));
    return std::move(*this);
  }

  std::vector<Row> rows_;
};

}  // namespace lockstep::kinds

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_KEY_TABLE_H_
