// TableReader: reads the keys of one TOML table of a plan ([run], one
// [[agent]], one [[phase]]) into typed values, with errors that name the
// file, line and column, the table, the key and what is accepted. Used by
// the plan parser only (plan.cc, phase_table.cc).
#ifndef LOCKSTEP_CONTROLLER_PLAN_TABLE_READER_H_
#define LOCKSTEP_CONTROLLER_PLAN_TABLE_READER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include <toml++/toml.h>

namespace lockstep {

class TableReader {
 public:
  // `source` names the file ("plan.toml"), `where` the table ("[run]",
  // "[[phase]] 'w'"); `valid` are the keys the table may hold.
  TableReader(const toml::table& table, std::string source, std::string where,
              std::vector<std::string> valid);

  // "SOURCE:LINE:COLUMN" of `node`, or of the table.
  std::string Pos(const toml::node& node) const;
  std::string Pos() const { return Pos(table_); }

  // InvalidArgument "POS: WHERE key 'KEY': WHY".
  absl::Status Error(const toml::node& node, const std::string& key, const std::string& why) const;
  // InvalidArgument "POS: WHERE has no 'KEY'; HOW".
  absl::Status Missing(const std::string& key, const std::string& how) const;
  // The first key not in `valid`, named with, for a typo, the closest valid
  // one (common/flags.h ClosestName), and then `listed` ("kind = ... takes
  // ...") or, when empty, every valid key.
  absl::Status CheckUnknown(const std::string& listed = "") const;

  // nullptr when the table has no `key`. A key overridden by Override()
  // answers with its override.
  const toml::node* Get(const std::string& key) const;

  // One point of a sweep: `key` reads as `value` (an element of the key's
  // list, owned by the table, so that messages keep its line and column).
  void Override(const std::string& key, const toml::node* value) { overrides_[key] = value; }

  // Each reader leaves *out unchanged when the key is absent, and returns
  // an Error naming the key when its value has the wrong type or range.
  absl::Status String(const std::string& key, std::string* out) const;
  absl::Status Bool(const std::string& key, bool* out) const;
  absl::Status Uint(const std::string& key, uint64_t min, uint64_t max, uint64_t* out) const;
  absl::Status Uint32(const std::string& key, uint32_t min, uint32_t max, uint32_t* out) const;
  // `n` is the value of `key` or an element of its array.
  absl::Status UintNode(const toml::node& n, const std::string& key, uint64_t min, uint64_t max,
                        uint64_t* out) const;
  // A name used as one path component (file_name, file_prefix): a string,
  // not empty, not "." or "..", without '/' or NUL; the refusal names the
  // key, its line and the value, and says what `example` would be.
  absl::Status FileName(const std::string& key, const std::string& example, std::string* out) const;
  // A directory path (dir): a string, not empty, without NUL.
  absl::Status Path(const std::string& key, std::string* out) const;
  // A size: an integer (bytes) or a string with a unit ("1m", "4GiB"); > 0.
  absl::Status Size(const std::string& key, uint64_t* out) const;
  // A string that must be one of `choices` (as String, then checked).
  absl::Status OneOf(const std::string& key, const std::vector<std::string>& choices,
                     std::string* out) const;

  // "a string", "an integer", ... for messages.
  static std::string TypeName(const toml::node& n);

 private:
  const toml::table& table_;
  std::string source_;
  std::string where_;
  std::vector<std::string> valid_;
  std::map<std::string, const toml::node*> overrides_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_TABLE_READER_H_
