#include "agent/fs/lustre_fs.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_cat.h"
#include "agent/fs/obdfilter.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

absl::Status NeedLustre(const FileSystemContext& ctx, const std::string& what) {
  if (ctx.allow_lustre) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s needs Lustre tools (lfs/lctl), which this agent's configuration does not allow; "
      "start lockstep-agent with --allow_lustre on Lustre nodes",
      what));
}

v1::FsLayout LayoutOf(const StripeInfo& info) {
  v1::FsLayout l;
  l.set_raw(info.raw);
  if (info.stripe_size_bytes) l.set_stripe_unit_bytes(*info.stripe_size_bytes);
  if (info.stripe_count) l.set_stripe_count(*info.stripe_count);
  l.set_stripe_index(info.stripe_index.value_or(-1));
  l.set_pool(info.pool);
  return l;
}

class LustreChecksums : public FsTunableScope {
 public:
  explicit LustreChecksums(std::unique_ptr<ScopedParam> scope) : scope_(std::move(scope)) {}
  std::string Before() const override {
    std::vector<std::string> before;
    for (const ParamValue& p : scope_->saved()) before.push_back(p.name + "=" + p.value);
    return absl::StrJoin(before, "\n");
  }

 private:
  std::unique_ptr<ScopedParam> scope_;  // restores in its destructor
};

}  // namespace

absl::Status LustreFs::CheckSettings(const v1::PhaseSpec& spec, const std::string& dir) const {
  if (spec.set_stripe()) {
    RETURN_IF_ERROR(NeedLustre(ctx_, "striping (stripe_count/stripe_size/stripe_index/pool)"));
    if (spec.object_size_bytes() != 0) {
      return NotOnThisFs("lustre", "object_size", absl::StrFormat("%u", spec.object_size_bytes()),
                         dir, "has no object size (a stripe is the unit on an OST)");
    }
  }
  if (spec.checksums() != v1::CHECKSUMS_UNCHANGED) {
    RETURN_IF_ERROR(NeedLustre(ctx_, "checksums = true/false"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::FsLayout> LustreFs::SetLayout(const std::string& dir, const std::string& at,
                                                 const v1::PhaseSpec& spec) const {
  RETURN_IF_ERROR(CheckSettings(spec, dir));
  StripeSettings st;
  st.stripe_count = spec.stripe_count();
  st.stripe_size_bytes = spec.stripe_size_bytes();
  st.stripe_index = spec.stripe_index();
  st.pool = spec.stripe_pool();
  st.through = at;
  RETURN_IF_ERROR(ctx_.lustre->SetStripe(dir, st));
  auto info = ctx_.lustre->GetStripe(dir);
  if (!info.ok()) {
    v1::FsLayout l;
    l.set_raw("getstripe failed: " + std::string(info.status().message()));
    return l;
  }
  return LayoutOf(*info);
}

absl::StatusOr<v1::FsLayout> LustreFs::GetLayout(const std::string& path) const {
  RETURN_IF_ERROR(NeedLustre(ctx_, "reading a layout (lfs getstripe)"));
  ASSIGN_OR_RETURN(StripeInfo info, ctx_.lustre->GetStripe(path));
  return LayoutOf(info);
}

absl::StatusOr<std::unique_ptr<FsTunableScope>> LustreFs::SetChecksums(bool on) const {
  RETURN_IF_ERROR(NeedLustre(ctx_, "checksums = true/false"));
  ASSIGN_OR_RETURN(std::unique_ptr<ScopedParam> scope,
                   ScopedParam::Set(*ctx_.lustre, "osc.*.checksums", on ? "1" : "0"));
  return std::unique_ptr<FsTunableScope>(std::make_unique<LustreChecksums>(std::move(scope)));
}

absl::Status LustreFs::DropClientCaches() const {
  RETURN_IF_ERROR(NeedLustre(ctx_, "lustre_lru_clear"));
  return ctx_.lustre->SetParam("ldlm.namespaces.*.lru_size", "clear");
}

std::unique_ptr<LustreTools> SetUpLustre(const LustreToolsOptions& options, bool allowed,
                                         v1::Role role, FileSystemContext* ctx,
                                         std::map<std::string, std::string>* extra_facts) {
  auto tools = std::make_unique<LustreTools>(options);
  ctx->lustre = tools.get();
  ctx->allow_lustre = allowed;
  ctx->lustre_any_fs = !options.require_lustre;
  if (!allowed) return tools;
  if (auto v = tools->Version(); v.ok()) ctx->lustre_version = *v;
  if (role == v1::OSS) {
    if (auto osts = LocalOsts(*tools); osts.ok() && !osts->empty()) {
      (*extra_facts)["lustre_osts"] = absl::StrCat(osts->size());
    }
  }
  return tools;
}

}  // namespace lockstep
