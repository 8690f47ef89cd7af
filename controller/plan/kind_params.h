// The keys a phase kind owns, kept in the phase (PhasePlan::Own) without
// plan.h knowing the kind: each kind declares its struct next to its file
// (controller/plan/kinds/KIND_plan.h, deriving from KindParamsOf) and reads,
// checks and writes it there.
#ifndef LOCKSTEP_CONTROLLER_PLAN_KIND_PARAMS_H_
#define LOCKSTEP_CONTROLLER_PLAN_KIND_PARAMS_H_

#include <memory>
#include <typeinfo>
#include <vector>

namespace lockstep {

class KindParams {
 public:
  virtual ~KindParams() = default;
  virtual std::unique_ptr<KindParams> Clone() const = 0;
};

// struct SeeksPlan : KindParamsOf<SeeksPlan> { uint64_t seeks = 0; ... };
template <typename T>
class KindParamsOf : public KindParams {
 public:
  std::unique_ptr<KindParams> Clone() const override {
    return std::make_unique<T>(static_cast<const T&>(*this));
  }
};

// At most one struct of each kind's type, copied deeply (a phase is copied
// for each point of a sweep). A struct never set reads as its defaults, so a
// phase of any kind reads another kind's keys as the defaults they have.
class KindParamsSet {
 public:
  KindParamsSet() = default;
  KindParamsSet(const KindParamsSet& other) { CopyFrom(other); }
  KindParamsSet& operator=(const KindParamsSet& other) {
    if (this != &other) CopyFrom(other);
    return *this;
  }
  KindParamsSet(KindParamsSet&&) = default;
  KindParamsSet& operator=(KindParamsSet&&) = default;

  // The T held, or T's defaults when none is.
  template <typename T>
  const T& Get() const {
    if (const T* held = Find<T>()) return *held;
    static const T kDefaults;
    return kDefaults;
  }
  // The T held, made with its defaults when none is.
  template <typename T>
  T& Mutable() {
    if (const T* held = Find<T>()) return *const_cast<T*>(held);
    own_.push_back(std::make_unique<T>());
    return static_cast<T&>(*own_.back());
  }

 private:
  template <typename T>
  const T* Find() const {
    for (const std::unique_ptr<KindParams>& p : own_) {
      if (typeid(*p) == typeid(T)) return static_cast<const T*>(p.get());
    }
    return nullptr;
  }
  void CopyFrom(const KindParamsSet& other) {
    own_.clear();
    for (const std::unique_ptr<KindParams>& p : other.own_) own_.push_back(p->Clone());
  }

  std::vector<std::unique_ptr<KindParams>> own_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_KIND_PARAMS_H_
