// Step 3 of the reference pipeline: check a program, save it, read it back.
//
// Before anyone renders a program, the verifier checks it: every finding
// names the line, its kind, the buffer or symbol, and says what is wrong.
// A checked program travels as JSON (io/json.hpp, versioned) and reads as
// text (emit/text.hpp, io/text.hpp) — `wrapir dump` prints the same text,
// and bug reports carry it.

#include <wrapir/emit/text.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/text.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>

#include <cstdio>
#include <string>

int main() {
  // out = topk(x @ w, 2).values, with the mm as an extern kernel.
  wrapir::Program p{"mm_topk"};
  wrapir::Builder b{p, wrapir::cuda_device(0)};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 512);
  const auto x = b.input("arg0_1", {s0, ctx.integer(256)}, wrapir::f32);
  const auto w = b.input("arg1_1", {ctx.integer(256), ctx.integer(64)}, wrapir::f32);
  const auto mm = b.empty({s0, ctx.integer(64)}, wrapir::f32);
  b.extern_out("extern_kernels.mm", {x, w}, wrapir::ir::BufferArg{mm});
  const auto topk = b.extern_alloc_multi("aten.topk.default", {mm, 2});
  auto layout = [&](wrapir::DType t) {
    return wrapir::ir::Layout::contiguous(ctx, {s0, ctx.integer(2)}, t, wrapir::cuda_device(0));
  };
  const auto parts = b.unpack(topk, {layout(wrapir::f32), layout(wrapir::i64)});
  b.free({mm});
  b.output(parts[0]);

  // 1. Verify. A correct program has no findings...
  std::printf("verify: %zu findings\n", wrapir::verify(p).size());
  // ... and a broken copy (the mm result freed before topk reads it) has one.
  wrapir::Program broken = p;
  broken.body.insert(broken.body.begin() + 2, broken.body.back());
  broken.body.pop_back();
  for (const auto& finding : wrapir::verify(broken)) std::printf("  broken copy: %s\n", to_string(finding).c_str());

  // 2. Save and load JSON; loading into the program's context gives an equal program.
  const std::string json = wrapir::io::to_json(p);
  auto loaded = wrapir::io::program_from_json(json, {.context = p.context});
  std::printf("json: %zu bytes, reloads equal: %s\n", json.size(), loaded && *loaded == p ? "yes" : "no");

  // 3. The text form, and a hostile name refused on load.
  std::fputs(wrapir::text::to_text(p).c_str(), stdout);
  std::string hostile = json;
  hostile.replace(hostile.find("\"arg0_1\""), 8, "\"x; import os\"");
  auto refused = wrapir::io::program_from_json(hostile);
  std::printf("hostile name: %s\n", refused ? "accepted (wrong!)" : refused.error().message.c_str());
  return loaded && *loaded == p && !refused && wrapir::verify(p).empty() ? 0 : 1;
}
