// `k3plan launch`: take a deployment through fit, refuse what does not fit, emit the commands.
#include <filesystem>
#include <fstream>
#include <k3plan/deploy_fit.hpp>
#include <k3plan/error.hpp>
#include <k3plan/launch.hpp>
#include <k3plan/units.hpp>

#include "common.hpp"

namespace k3plan {

namespace {

std::string read_text(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(fmt::format("{}: no such file", path));
  if (std::filesystem::file_size(path, ec) > 16u * 1024u * 1024u)
    throw InputError(fmt::format("{}: larger than 16 MiB; not a deployment file", path));
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

// Writes atomically: a temporary file renamed into place, so no half-written file remains.
void write_file(const std::filesystem::path& p, const std::string& text, bool executable) {
  const auto tmp = p.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw InputError(fmt::format("{}: cannot write", p.string()));
    f << text;
    if (!f) throw InputError(fmt::format("{}: write failed", p.string()));
  }
  std::error_code ec;
  if (executable)
    std::filesystem::permissions(
        tmp, std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec | std::filesystem::perms::others_exec,
        std::filesystem::perm_options::add, ec);
  std::filesystem::rename(tmp, p, ec);
  if (ec) throw InputError(fmt::format("{}: {}", p.string(), ec.message()));
}

}  // namespace

Report run_launch(const Catalogue& cat, const LaunchOptions& o) {
  if (o.emit != "sh" && o.emit != "k8s" && o.emit != "json") {
    const auto hint = closest_match(o.emit, {"sh", "k8s", "json"});
    throw InputError(
        fmt::format("--emit {}: unknown{}", o.emit, hint.empty() ? " (use sh, k8s or json)" : fmt::format("; did you mean '{}'?", hint)));
  }
  Deployment d;
  std::vector<Finding> schema;
  if (!o.file.empty()) {
    d = parse_deployment(read_text(o.file), o.file, schema);
  } else {
    d = o.flags;
    d.file = "<flags>";
    if (d.model.empty()) throw InputError("launch: give a deployment file or -m MODEL -g GPU -n GPUS");
    if (d.gpu.empty()) throw InputError("launch: -g GPU is required");
    if (d.gpus == 0 && d.nodes == 0) throw InputError("launch: -n GPUS (or --nodes) is required");
  }
  Report r;
  for (const auto& f : schema)
    if (f.severity == "error")
      r.notes.push_back(fmt::format("{}:{}:{}: error: {} [{}]", f.pos.file, f.pos.line, f.pos.column, f.message, f.rule));
  if (!r.notes.empty()) {
    r.exit_code = 1;
    r.data = {{"emitted", false}, {"reasons", r.notes}};
    r.notes.insert(r.notes.begin(), "launch refused: the deployment file has errors (run `k3plan check` for all findings)");
    return r;
  }
  const DeploymentFit df = fit_deployment(cat, d);
  const FitResult& f = df.fit;
  if (const KvDtypeArg kv = engine_kv_dtype(flag_release(d.engine, d.engine_version), d.kv_dtype, df.model.dtype); !kv.error.empty()) {
    r.exit_code = 1;
    r.notes.push_back("launch refused: " + kv.error);
    r.data = {{"emitted", false}, {"reasons", {kv.error}}};
    return r;
  }
  if (!f.fits) {
    r.exit_code = 1;
    r.notes.push_back(fmt::format("launch refused: {} on {} x {} does not fit:", df.model.id, df.gpus, df.gpu->id));
    for (const auto& x : f.reasons) r.notes.push_back("  - " + x);
    r.data = {{"emitted", false}, {"reasons", f.reasons}};
    return r;
  }
  const LaunchPlan plan =
      make_launch_plan(d, df.model, f.layout, df.gpus, df.nodes, df.gpu->gpus_per_node, df.context, f.utilization_used, f.max_num_seqs);
  if (!plan.error.empty()) {
    // the engine release would refuse (or silently change) what fit planned: emit nothing
    r.exit_code = 1;
    r.notes.push_back(fmt::format("launch refused: {}", plan.error));
    for (const auto& n : plan.notes) r.notes.push_back("  - " + n);
    r.data = {{"emitted", false}, {"reasons", {plan.error}}};
    return r;
  }
  const std::string image = !o.image.empty() ? o.image : engine_model(d.engine, d.engine_version).default_image();
  const std::string gpu_res = df.gpu->vendor == "amd" ? "amd.com/gpu" : "nvidia.com/gpu";
  nlohmann::json jn = nlohmann::json::array();
  for (const auto& c : plan.nodes_cmd) jn.push_back({{"rank", c.rank}, {"env", c.env}, {"argv", c.argv}});
  r.data = {{"emitted", true},
            {"model", df.model.id},
            {"gpu", df.gpu->id},
            {"gpus", df.gpus},
            {"nodes", df.nodes},
            {"engine", to_string(d.engine)},
            {"engine_flags", plan.release.label()},
            {"layout",
             {{"tp", f.layout.tp},
              {"ep", f.layout.ep},
              {"dp", f.layout.dp},
              {"pp", f.layout.pp},
              {"dp_attention", f.layout.dp_attention},
              {"dcp", f.layout.dcp}}},
            {"context", df.context},
            {"memory_fraction", f.utilization_used},
            {"kv_cache_tokens", f.kv_cache_tokens},
            {"max_users", f.max_users},
            {"headroom", f.headroom},
            {"commands", jn},
            {"health_check", "curl -sf " + plan.health_url},
            {"ready_line", plan.ready_line},
            {"warnings", f.warnings}};
  std::string text;
  if (o.emit == "sh")
    text = emit_shell(plan);
  else if (o.emit == "k8s")
    text = emit_lws(plan, image, gpu_res);
  if (d.engine == Engine::vllm && f.layout.dp > 1 && df.nodes > 2 && o.emit == "k8s")
    r.notes.push_back("note: vLLM DP across more than 2 pods needs a per-worker --data-parallel-start-rank; the manifest gives worker 1's");
  if (!o.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) throw InputError(fmt::format("--out {}: {}", o.out_dir, ec.message()));
    const std::filesystem::path dir(o.out_dir);
    if (o.emit == "sh") {
      for (const auto& c : plan.nodes_cmd) {
        const auto p = dir / fmt::format("node-{}.sh", c.rank);
        write_file(p, emit_shell(plan, c.rank), true);
        r.notes.push_back("wrote " + p.string());
      }
    } else if (o.emit == "k8s") {
      write_file(dir / "lws.yaml", text, false);
      r.notes.push_back("wrote " + (dir / "lws.yaml").string());
    } else {
      write_file(dir / "launch.json", r.data.dump(2) + "\n", false);
      r.notes.push_back("wrote " + (dir / "launch.json").string());
    }
    r.data["files"] = r.notes;
  } else if (o.emit != "json") {
    r.raw_text = text;
  }
  for (const auto& w : f.warnings) r.notes.push_back("warning: " + w);
  for (const auto& n : plan.notes) r.notes.push_back("note: " + n);
  r.data["notes"] = plan.notes;
  return r;
}

}  // namespace k3plan
