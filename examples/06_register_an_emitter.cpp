// Step 6: a target of your own next to the built-ins. An EmitterRegistry maps target names to emitters
// (a function of a program and KEY=VALUE options, returning its text or appending to a sink); the built-in
// python, text and dot come from register_builtin_targets. Names are checked, a taken name is refused, and
// an unknown one is a diagnostic listing what is known. `wrapir emit --target NAME` selects the same way.
#include <wrapir/emit/emit.hpp>
#include <wrapir/emit/registry.hpp>
#include <wrapir/emit/targets.hpp>
#include <wrapir/ir/builder.hpp>

#include <cstdio>
#include <string>

using namespace wrapir;

struct LaunchList {  // one line per kernel launch, with the launch's index
  const Program& program;
  std::string& out;
  std::string prefix;
  int launches = 0;
  void operator()(const ir::KernelCall& c) {
    out += prefix + std::to_string(launches++) + " " + program.kernel(c.kernel).name + "\n";
  }
  void operator()(const auto&) {}  // every other kind: not a launch
};

int main() {
  Program p{"add_relu"};
  Builder b{p};
  const auto s0 = b.size_symbol("s0", 1024);
  const auto x = b.input("arg0_1", {s0}, f32);
  const auto add = b.triton_kernel("triton_poi_add_0", "...", "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
  const auto relu = b.triton_kernel("triton_poi_relu_1", "...", "in_out_ptr0: *fp32, xnumel: i32");
  const auto out = b.empty({s0}, f32);
  b.call(add, {x, out, s0}, {.free_after = {x}});
  b.call(relu, {out, s0});
  b.output(out);

  EmitterRegistry registry;
  if (!register_builtin_targets(registry)) return 1;
  // Our target, with one option. The registry refuses keys we did not declare before we run.
  auto added = registry.add(
      "launches", "one line per kernel launch",
      [](const Program& program, const EmitOptions& options) -> Result<std::string> {
        std::string text;
        wrapir::emit(program, LaunchList{program, text, std::string(options.get("prefix").value_or("#"))});
        return text;
      },
      {{"prefix", "what each line starts with (#)"}});
  if (!added) return 1;

  auto launches = registry.emit("launches", p, EmitOptions{{{"prefix", "launch "}}});
  if (!launches) return 1;
  std::fputs(launches->c_str(), stdout);
  auto graph = registry.emit("dot", p, EmitOptions{{{"legend", "false"}}});  // a built-in, the same way
  if (!graph) return 1;
  std::printf("dot: %zu bytes; targets: %s\n", graph->size(), registry.known().c_str());

  auto taken = registry.add("python", "mine", [](const Program&, const EmitOptions&) -> Result<std::string> {
    return std::string();
  });
  auto unknown = registry.emit("cpp", p);
  if (taken || unknown) return 1;  // both must be refused
  std::printf("%s\n%s\n", taken.error().message.c_str(), unknown.error().message.c_str());
  return *launches == "launch 0 triton_poi_add_0\nlaunch 1 triton_poi_relu_1\n" ? 0 : 1;
}
