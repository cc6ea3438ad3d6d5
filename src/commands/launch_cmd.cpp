// `k3plan launch`: take a deployment through fit, refuse what does not fit, emit the commands.
#include <filesystem>
#include <fstream>
#include <k3plan/deploy_fit.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/error.hpp>
#include <k3plan/input_limits.hpp>
#include <k3plan/launch.hpp>
#include <k3plan/limits.hpp>
#include <k3plan/output_file.hpp>
#include <k3plan/params.hpp>
#include <k3plan/plan.hpp>
#include <k3plan/units.hpp>

#include "common.hpp"

namespace k3plan {

namespace {

// Every value that reaches a script or manifest must be text: invalid UTF-8 or a NUL is refused here.
void require_text(const std::string& s, const char* field) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (c == 0 || n == 0 || i + n > s.size()) throw InputError(fmt::format("launch: {}: not text (byte {} is not valid UTF-8)", field, i));
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0u) != 0x80u)
        throw InputError(fmt::format("launch: {}: not text (byte {} is not valid UTF-8)", field, i));
    i += n;
  }
}

// A manifest runs a container image: pin it to the engine release (launch_image) and check the flags
// against that release. Sets d.engine_version when none was given; notes say what was chosen.
PinnedImage pin_image(const LaunchOptions& o, Deployment& d, std::vector<std::string>& notes) {
  PinnedImage pinned;
  if (o.emit != "k8s" || !o.image.empty()) return pinned;
  pinned = launch_image(d.engine, d.engine_version);
  if (d.engine_version.empty() && !pinned.release.empty()) {
    d.engine_version = pinned.release;
    notes.push_back(
        fmt::format("image pinned to {} (the newest release whose flags were read); pass --engine-version to choose", pinned.image));
  } else if (pinned.release.empty()) {
    notes.push_back(
        fmt::format("engine version '{}' has no release image: {} is not pinned; pass --image", d.engine_version, pinned.image));
  }
  return pinned;
}

// What a LeaderWorkerSet of this fit needs beyond its commands: image, placement, storage, what one pod
// downloads and loads (the start-up budget).
K8sSpec k8s_spec(const LaunchOptions& o, const PinnedImage& pinned, const DeploymentFit& df) {
  K8sSpec k;
  parse_k8s_placement(o.node_selectors, o.tolerations, k);
  k.image = !o.image.empty() ? o.image : pinned.image;
  k.gpu_resource = df.gpu->vendor == "amd" ? "amd.com/gpu" : "nvidia.com/gpu";
  k.model_pvc = o.model_pvc;
  k.model_host_path = o.model_host_path;
  k.checkpoint_bytes = weights_as_shipped(df.model, count_params(df.model)).bytes;
  k.pod_weights_bytes = df.fit.limiting.weights_bytes * std::min(df.gpus, df.gpu->gpus_per_node);
  return k;
}

// `launch --prefill-* --decode-*`: each pool's worker through fit (one worker: its layout, its share
// of the users), the two plans, then the disaggregation flags and the router (make_disagg_launch_plan).
Report run_launch_disagg(const Catalogue& cat, LaunchOptions o) {
  if (!o.file.empty()) throw InputError("launch: the disaggregated pools (--prefill-* / --decode-*) go with -m -g, not a deployment file");
  for (auto [role, s] : {std::pair{"prefill", &o.prefill}, std::pair{"decode", &o.decode}}) {
    const PoolSize z = pool_size(role, s->workers, s->tp, s->gpus, limits::kMaxLaunchWorkers);
    s->workers = std::max(1, z.workers);
    s->tp = z.tp;
  }
  if (o.prefill.tp == 0 || o.decode.tp == 0)
    throw InputError(
        "launch: disaggregated serving needs both pools: --prefill-tp and --decode-tp, or --prefill-gpus and --decode-gpus (with their "
        "-ep / -dp-attention / -workers)");
  if (o.layout_given || o.flags.gpus > 0 || o.flags.nodes > 0)
    throw InputError(
        "launch: the layout is per pool (--prefill-* / --decode-*); -n, --nodes, --tp, --ep, --dp, --pp, --dcp and "
        "--enable-dp-attention do not apply");
  Deployment d = o.flags;
  d.file = "<flags>";
  if (d.model.empty()) throw InputError("launch: give -m MODEL -g GPU with the pools");
  if (d.gpu.empty()) throw InputError("launch: -g GPU is required");
  for (const auto& [value, field] :
       std::initializer_list<std::pair<const std::string&, const char*>>{{d.model_path, "--model-path"},
                                                                         {d.host, "--host"},
                                                                         {o.disagg.ib_device, "--ib-device"},
                                                                         {o.disagg.transfer_backend, "--transfer-backend"},
                                                                         {o.image, "--image"},
                                                                         {o.model_pvc, "--model-pvc"},
                                                                         {o.model_host_path, "--model-host-path"}})
    require_text(value, field);
  if (!d.head_address.empty())
    throw InputError("launch: --head-address names one head; each disaggregated worker's head is its own variable (PREFILL_0_ADDR ...)");
  std::vector<std::string> pin_notes;
  const PinnedImage pinned = pin_image(o, d, pin_notes);
  if (d.context == 0) d.context = std::min<std::int64_t>(resolve_model(cat, d.model).max_context, 32768);
  const EngineModel& em = engine_model(d.engine, d.engine_version);
  Report r;
  LaunchPool pools[2];
  K8sSpec specs[2];
  nlohmann::json sides = nlohmann::json::object();
  int total_gpus = 0;
  for (int k = 0; k < 2; ++k) {
    const LaunchSide& s = k == 0 ? o.prefill : o.decode;
    const std::string role = k == 0 ? "prefill" : "decode";
    if (s.ep > s.tp)
      throw InputError(fmt::format("--{}-ep {} exceeds --{}-tp {}: a worker's EP group lies inside its TP group", role, s.ep, role, s.tp));
    if (s.dp_attention && !em.has_setting("dp_attention"))
      throw InputError(fmt::format("launch: --{}-dp-attention: {} has no DP attention per worker", role, em.display_name()));
    Deployment ds = d;
    ds.layout = disagg_worker_layout({s.workers, s.tp, s.ep, s.dp_attention});
    ds.layout_given = true;
    ds.where["parallel.ep"] = {"--" + role + "-ep", 0, 0};  // EP given: vLLM does not derive it
    ds.gpus = em.gpus(ds.layout);
    // a worker holds its share of the users (a prefill worker keeps their prompts until the transfer)
    ds.users = std::max<std::int64_t>(1, (d.users + s.workers - 1) / s.workers);
    const int port = d.port > 0 ? d.port : em.default_port();
    ds.port = k == 0 ? port : port + 1;
    DeploymentFit df = fit_deployment(cat, ds);
    if (k == 0 && !df.fit.fits && ds.users > 1) {
      // a prefill worker holds a request only until its KV cache is sent: it runs what its pool holds
      // at the context length, the other prompts queue in front of it
      Deployment one = ds;
      one.users = 1;
      const DeploymentFit d1 = fit_deployment(cat, one);
      if (d1.fit.fits && d1.fit.max_users >= 1) {
        ds.users = d1.fit.max_users;
        df = fit_deployment(cat, ds);
        r.notes.push_back(fmt::format("prefill worker: {} running requests (what its KV pool holds at {} tokens); more prompts queue",
                                      ds.users, df.context));
      }
    }
    require_text(df.model.id, "model id");
    const FitResult& f = df.fit;
    if (!f.fits) {
      r.exit_code = 1;
      r.notes.push_back(fmt::format("launch refused: a {} worker of {} on {} x {} does not fit:", role, df.model.id, df.gpus, df.gpu->id));
      for (const auto& x : f.reasons) r.notes.push_back("  - " + x);
      r.data = {{"emitted", false}, {"rule", "launch-fit"}, {"reasons", f.reasons}};
      return r;
    }
    if (const KvDtypeArg kv = engine_kv_dtype(flag_release(d.engine, d.engine_version), d.kv_dtype, df.model.dtype); !kv.error.empty()) {
      r.exit_code = 1;
      r.notes.push_back("launch refused: " + kv.error);
      r.data = {{"emitted", false}, {"rule", "launch-kv-dtype"}, {"reasons", {kv.error}}};
      return r;
    }
    pools[k].workers = s.workers;
    pools[k].plan =
        make_launch_plan(ds, df.model, f.layout, df.gpus, df.nodes, df.gpu->gpus_per_node, df.context, f.utilization_used, f.max_num_seqs);
    if (!pools[k].plan.error.empty()) {
      r.exit_code = 1;
      r.notes.push_back(fmt::format("launch refused: {} worker: {}", role, pools[k].plan.error));
      r.data = {{"emitted", false}, {"rule", "launch-flags"}, {"reasons", {pools[k].plan.error}}};
      return r;
    }
    if (o.emit == "k8s") specs[k] = k8s_spec(o, pinned, df);
    total_gpus += s.workers * df.gpus;
    sides[role] = {{"workers", s.workers},
                   {"gpus_per_worker", df.gpus},
                   {"nodes_per_worker", df.nodes},
                   {"layout", layout_json(f.layout)},
                   {"port", ds.port},
                   {"max_users_per_worker", f.max_users},
                   {"kv_cache_tokens", f.kv_cache_tokens},
                   {"warnings", f.warnings}};
    for (const auto& w : f.warnings) r.notes.push_back(fmt::format("warning: {} worker: {}", role, w));
  }
  DisaggLaunchRequest q = o.disagg;
  if (q.router_port == 0) q.router_port = d.engine == Engine::sglang ? 8000 : 8192;
  q.source_release = pinned.release;  // the image's: the proxy's source file comes from the same release
  const DisaggLaunchPlan plan = make_disagg_launch_plan(pools[0], pools[1], q);
  if (!plan.error.empty()) {
    r.exit_code = 1;
    r.notes.push_back(fmt::format("launch refused [{}]: {}", plan.rule, plan.error));
    r.data = {{"emitted", false}, {"rule", plan.rule}, {"reasons", {plan.error}}};
    return r;
  }
  r.data = {{"emitted", true},
            {"model", plan.prefill.plan.model_id},
            {"gpu", d.gpu},
            {"gpus", total_gpus},
            {"engine", to_string(d.engine)},
            {"engine_flags", plan.release.label()},
            {"context", d.context},
            {"disaggregated", sides},
            {"transfer_backend", plan.transfer_backend},
            {"address_variables", plan.address_vars},
            {"router_url", plan.router_url},
            {"commands", launch_commands_json(plan)}};
  std::vector<std::string> notes = plan.notes;
  notes.insert(notes.end(), pin_notes.begin(), pin_notes.end());
  r.data["notes"] = notes;
  if (o.emit == "k8s") {
    r.data["image"] = specs[0].image;
    r.data["startup_budget_s"] = {{"prefill", startup_budget_seconds(specs[0].checkpoint_bytes, specs[0].pod_weights_bytes)},
                                  {"decode", startup_budget_seconds(specs[1].checkpoint_bytes, specs[1].pod_weights_bytes)}};
  }
  DisaggLaunchPlan shown = plan;
  shown.notes = notes;
  const std::string text = o.emit == "sh" ? emit_shell(shown) : o.emit == "k8s" ? emit_lws(shown, specs[0], specs[1]) : std::string();
  if (!o.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) throw InputError(fmt::format("--out {}: {}", o.out_dir, ec.message()));
    const std::filesystem::path dir(o.out_dir);
    std::vector<OutputFile> files;
    if (o.emit == "sh")
      files.push_back({(dir / "launch-pd.sh").string(), text, true});
    else if (o.emit == "k8s")
      files.push_back({(dir / "lws-pd.yaml").string(), text, false});
    else
      files.push_back({(dir / "launch.json").string(), r.data.dump(2) + "\n", false});
    write_files_atomic(files);
    for (const auto& fl : files) r.notes.push_back("wrote " + fl.path);
    r.data["files"] = r.notes;
  } else {
    r.raw_text = o.emit == "json" ? r.data.dump(2) + "\n" : text;
  }
  for (const auto& n : notes) r.notes.push_back("note: " + n);
  return r;
}

}  // namespace

Report run_launch(const Catalogue& cat, const LaunchOptions& o) {
  if (o.emit != "sh" && o.emit != "k8s" && o.emit != "json") {
    const auto hint = closest_match(o.emit, {"sh", "k8s", "json"});
    throw InputError(
        fmt::format("--emit {}: unknown{}", o.emit, hint.empty() ? " (use sh, k8s or json)" : fmt::format("; did you mean '{}'?", hint)));
  }
  if (o.prefill.tp > 0 || o.decode.tp > 0 || o.prefill.workers > 0 || o.decode.workers > 0 || o.prefill.gpus > 0 || o.decode.gpus > 0 ||
      o.prefill.dp_attention || o.decode.dp_attention || !o.disagg.transfer_backend.empty() || !o.disagg.ib_device.empty())
    return run_launch_disagg(cat, o);
  Deployment d;
  std::vector<Finding> schema;
  if (!o.file.empty()) {
    if (o.layout_given) throw InputError("launch: --tp/--ep/--dp/--pp/--dcp/--enable-dp-attention go with -m -g -n, not a deployment file");
    d = parse_deployment(read_yaml_input(o.file, "deployment file"), o.file, schema);
  } else {
    d = o.flags;
    d.file = "<flags>";
    if (d.model.empty()) throw InputError("launch: give a deployment file or -m MODEL -g GPU -n GPUS");
    if (d.gpu.empty()) throw InputError("launch: -g GPU is required");
    if (o.layout_given) {
      // the layout flags `fit` takes, with its rules: unset degrees are 1, vLLM derives EP = TP x DP
      // for a MoE model unless --ep is given, and -n must match the layout's GPUs
      d.layout_given = true;
      const EngineModel& em = engine_model(d.engine, d.engine_version);
      const int n = em.gpus(d.layout);
      if (d.gpus > 0 && d.gpus != n)
        throw InputError(fmt::format("launch: -n {} contradicts the layout: {} needs {} GPUs ({})", d.gpus, em.gpu_product_text(), n,
                                     em.display_name()));
      if (d.gpus == 0 && d.nodes == 0) d.gpus = n;
    }
    if (d.gpus == 0 && d.nodes == 0) throw InputError("launch: -n GPUS (or --nodes, or the layout flags) is required");
    if (d.context == 0) {
      // the default `fit` uses: the model's maximum, capped at 32k
      d.context = std::min<std::int64_t>(resolve_model(cat, d.model).max_context, 32768);
    }
  }
  for (const auto& [value, field] :
       std::initializer_list<std::pair<const std::string&, const char*>>{{d.model_path, "--model-path"},
                                                                         {d.served_model_name, "served_model_name"},
                                                                         {d.host, "--host"},
                                                                         {d.head_address, "--head-address"},
                                                                         {o.image, "--image"},
                                                                         {o.model_pvc, "--model-pvc"},
                                                                         {o.model_host_path, "--model-host-path"}})
    require_text(value, field);
  Report r;
  // a deployment file with schema errors is bad input (exit 2), as `check` reads it: the first error, located
  for (const auto& f : schema)
    if (f.severity == "error")
      throw InputError(fmt::format("{}:{}:{}: {} [{}] (run `k3plan check {}` for all findings)", f.pos.file, f.pos.line, f.pos.column,
                                   f.message, f.rule, f.pos.file));
  // a manifest runs a container image: pin it, and check the flags against that release
  std::vector<std::string> pin_notes;
  const PinnedImage pinned = pin_image(o, d, pin_notes);
  const DeploymentFit df = fit_deployment(cat, d);
  require_text(df.model.id, "model id");
  // a layer split the engine would refuse to start on is bad input (as `fit --pp-layer-partition`
  // and `check`'s engine/pp-layer-partition say), not a plan that does not fit; the stage count is
  // the layout's (both parsers take it from the split when PP is not given)
  if (!d.pp_layer_partition.empty()) {
    const SourcePos at = d.pos("parallel.pp_layer_partition");
    const std::string where = o.file.empty() ? std::string("--pp-layer-partition")
                                             : fmt::format("{}:{}:{}: parallel.pp_layer_partition", at.file, at.line, at.column);
    if (const std::string why = engine_model(d.engine, d.engine_version)
                                    .pp_partition_usage_error(where, d.pp_layer_partition, df.model.id, df.model.num_layers(), d.layout.pp, "");
        !why.empty())
      throw InputError(why);
  }
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
  LaunchPlan plan =
      make_launch_plan(d, df.model, f.layout, df.gpus, df.nodes, df.gpu->gpus_per_node, df.context, f.utilization_used, f.max_num_seqs);
  if (!plan.error.empty()) {
    // the engine release would refuse (or silently change) what fit planned: emit nothing
    r.exit_code = 1;
    r.notes.push_back(fmt::format("launch refused: {}", plan.error));
    for (const auto& n : plan.notes) r.notes.push_back("  - " + n);
    r.data = {{"emitted", false}, {"reasons", {plan.error}}};
    return r;
  }
  plan.notes.insert(plan.notes.end(), pin_notes.begin(), pin_notes.end());
  const K8sSpec k = k8s_spec(o, pinned, df);
  r.data = {{"emitted", true},
            {"model", df.model.id},
            {"gpu", df.gpu->id},
            {"gpus", df.gpus},
            {"nodes", df.nodes},
            {"engine", to_string(d.engine)},
            {"engine_flags", plan.release.label()},
            {"layout", layout_json(f.layout)},
            {"context", df.context},
            {"memory_fraction", f.utilization_used},
            {"kv_cache_tokens", f.kv_cache_tokens},
            {"max_users", f.max_users},
            {"headroom", f.headroom},
            {"commands", launch_commands_json(plan)},
            {"health_check", "curl -sf " + plan.health_url},
            {"ready_line", plan.ready_line},
            {"warnings", f.warnings}};
  if (o.emit == "k8s") {
    r.data["image"] = k.image;
    r.data["startup_budget_s"] = startup_budget_seconds(k.checkpoint_bytes, k.pod_weights_bytes);
  }
  r.data["notes"] = plan.notes;
  std::string text;
  if (o.emit == "sh")
    text = emit_shell(plan);
  else if (o.emit == "k8s")
    text = emit_lws(plan, k);
  if (!o.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) throw InputError(fmt::format("--out {}: {}", o.out_dir, ec.message()));
    const std::filesystem::path dir(o.out_dir);
    std::vector<OutputFile> files;  // staged complete before any replaces an old one
    if (o.emit == "sh") {
      for (const auto& c : plan.nodes_cmd)
        files.push_back({(dir / fmt::format("node-{}.sh", c.rank)).string(), emit_shell(plan, c.rank), true});
    } else if (o.emit == "k8s") {
      files.push_back({(dir / "lws.yaml").string(), text, false});
    } else {
      files.push_back({(dir / "launch.json").string(), r.data.dump(2) + "\n", false});
    }
    write_files_atomic(files);
    for (const auto& fl : files) r.notes.push_back("wrote " + fl.path);
    r.data["files"] = r.notes;
  } else if (o.emit == "json") {
    r.raw_text = r.data.dump(2) + "\n";  // stdout, as the other forms
  } else {
    r.raw_text = text;
  }
  for (const auto& w : f.warnings) r.notes.push_back("warning: " + w);
  for (const auto& n : plan.notes) r.notes.push_back("note: " + n);
  return r;
}

}  // namespace k3plan
