// Consumer smoke test of wrapir::cpu: the CPU backend's headers compile in a
// downstream project, and its reference externs link and call OpenBLAS
// (mm of two 2x2 matrices). Exit code 0 means wrapir::cpu works.
#include <wrapir/run/cpu/backend.hpp>

#include <cstdint>

int main() {
  namespace run = wrapir::run;
  // The executor's options with the CPU backend (without torch's headers the
  // C++ kernel provider says how to get them; it is not needed here).
  auto options = run::cpu::backend_options();
  if (!options || !options->externs) return 1;
  const auto* mm = options->externs->find("extern_kernels.mm");
  if (mm == nullptr) return 2;
  auto a = run::empty_cpu({2, 2}, wrapir::ir::DType::float32);
  auto b = run::empty_cpu({2, 2}, wrapir::ir::DType::float32);
  auto out = run::empty_cpu({2, 2}, wrapir::ir::DType::float32);
  if (!a || !b || !out) return 3;
  const float av[] = {1, 2, 3, 4}, bv[] = {5, 6, 7, 8};
  for (int i = 0; i < 4; ++i) {
    static_cast<float*>(a->data())[i] = av[i];
    static_cast<float*>(b->data())[i] = bv[i];
  }
  const run::Value args[] = {run::Value{*a}, run::Value{*b}};
  const run::KeywordArg kwargs[] = {{"out", run::Value{*out}}};
  auto done = (*mm)(run::ExternCall{"extern_kernels.mm", args, kwargs});
  if (!done) return 4;
  const auto* c = static_cast<const float*>(out->data());
  return c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50 ? 0 : 5;
}
