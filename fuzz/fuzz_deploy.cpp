// libFuzzer target: the deployment YAML parser, the vLLM / SGLang command-line parser and the
// LeaderWorkerSet reader must turn any input into a Deployment, findings or an InputError (exit 2)
// and nothing else: no crash, no sanitizer report, no other exception, no hang.
#include <cstddef>
#include <cstdint>
#include <k3plan/catalogue.hpp>
#include <k3plan/check.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/error.hpp>
#include <string>
#include <vector>

namespace {

const k3plan::Catalogue& catalogue() {
  static const k3plan::Catalogue cat = k3plan::Catalogue::embedded();
  return cat;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<k3plan::Finding> findings;

  // the deployment parser on its own (what `k3plan launch FILE` calls)
  try {
    const k3plan::Deployment d = k3plan::parse_deployment(text, "fuzz.yaml", findings);
    (void)d.pos("model");
  } catch (const k3plan::InputError&) {
  }

  // the `check` path: size/depth/binary guard, parse, then every rule
  findings.clear();
  try {
    k3plan::check_yaml_limits(text, "fuzz.yaml");
    k3plan::CheckTarget t;
    t.deployment = k3plan::parse_deployment(text, "fuzz.yaml", findings);
    t.anchor = {"fuzz.yaml", 1, 1};
    if (!t.deployment.model.empty()) k3plan::check_target(catalogue(), t, findings, nullptr);
  } catch (const k3plan::InputError&) {
  }

  // the command-line parser
  findings.clear();
  try {
    k3plan::CheckTarget t;
    t.kind = k3plan::InputKind::command;
    t.deployment = k3plan::parse_launch_command(text, "fuzz.sh", findings);
    t.deployment.gpu = "h200";
    if (!t.deployment.model.empty()) k3plan::check_target(catalogue(), t, findings, nullptr);
  } catch (const k3plan::InputError&) {
  }

  // LeaderWorkerSet manifests
  findings.clear();
  try {
    for (const auto& t : k3plan::parse_lws_manifest(catalogue(), text, "fuzz-lws.yaml", "", findings))
      if (!t.deployment.model.empty()) k3plan::check_target(catalogue(), t, findings, nullptr);
  } catch (const k3plan::InputError&) {
  }
  for (const auto& f : findings) (void)k3plan::finding_line(f);
  return 0;
}
