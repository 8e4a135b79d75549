#pragma once
/// \file
/// The Python rendering of scopes and control flow (emit/python.hpp):
/// Python blocks and their indentation, subgraphs inlined or called
/// (Conditional, WhileLoop), device guards, and the raw streams a launch
/// runs on (fetched once per scope).

#include <wrapir/emit/detail/python_function.hpp>
#include <wrapir/ir/names.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::python::detail {

inline void FunctionEmitter::render(const ir::EnterSubgraph& l) {
  const ir::Program& g = subgraph(l.graph);
  // The inlined code runs unconditionally; `if True:` gives Python the
  // block that Inductor's raw `if`/`while` line would open.
  statement();
  out_ += "if True:  # subgraph: ";
  out_ += g.name;
  out_ += '\n';
  open_block(Block::subgraph, "EnterSubgraph", true);
}

inline void FunctionEmitter::render(const ir::Conditional& l) {
  const ir::Program& t = subgraph(l.true_graph);
  const ir::Program& f = subgraph(l.false_graph);
  for (ir::BufferId o : l.outputs) buffer(o);
  statement();
  out_ += "if ";
  if (const auto* b = l.predicate.get_if<ir::BufferArg>()) {
    append_buffer_arg(*b);
    out_ += ".item()";
  } else if (const auto* e = l.predicate.get_if<expr::Expr>()) {
    append_expr(*e, "the predicate");
  } else if (const bool* v = l.predicate.get_if<bool>()) {
    out_ += *v ? "True" : "False";
  } else if (const std::int64_t* i = l.predicate.get_if<std::int64_t>()) {
    append_integer(out_, *i);
  } else {
    fail(std::string("the predicate is a ") + ir::arg_kind_name(l.predicate) +
         "; expected a buffer, a symbolic integer, a bool or an int");
  }
  out_ += ":\n";
  ++indent_;
  subgraph_call(t.name, l.operands, {}, l.outputs);
  --indent_;
  statement();
  out_ += "else:\n";
  ++indent_;
  subgraph_call(f.name, l.operands, {}, l.outputs);
  --indent_;
}

inline void FunctionEmitter::render(const ir::WhileLoop& l) {
  const ir::Program& c = subgraph(l.cond_graph);
  const ir::Program& b = subgraph(l.body_graph);
  if (l.carried.size() != l.outputs.size())
    fail("the while loop carries " + std::to_string(l.carried.size()) + " values but has " +
         std::to_string(l.outputs.size()) + " outputs");
  const std::string result = helper_name(c.name + "_result");
  // The outputs hold the carried values from the start: the loop passes
  // them to both subgraphs and rebinds them to each iteration's results.
  for (std::size_t i = 0; i < l.outputs.size(); ++i) {
    statement();
    out_ += buffer(l.outputs[i]).name;
    out_ += " = ";
    append_arg(l.carried[i]);
    out_ += '\n';
  }
  std::vector<ir::Arg> loop_args;
  for (ir::BufferId o : l.outputs) loop_args.emplace_back(o);
  auto evaluate_condition = [&] {
    const std::string args = helper_name(c.name + "_args");
    statement();
    out_ += args;
    out_ += " = [";
    append_arg_list(loop_args, l.additional);
    out_ += "]\n";
    statement();
    out_ += '(';
    out_ += result;
    out_ += ",) = ";
    out_ += global_callee(c.name, 's');
    out_ += '(';
    out_ += args;
    out_ += ")\n";
  };
  evaluate_condition();
  // A loop that never runs must still return new tensors, not the carried
  // ones (an input of the program, or a buffer freed after the loop), as
  // Inductor does: `if not should_loop: buf1[0] = buf0.clone()`.
  bool any_buffer = false;
  for (const ir::Arg& a : l.carried) any_buffer = any_buffer || a.holds<ir::BufferArg>();
  if (any_buffer) {
    statement();
    out_ += "if not ";
    out_ += result;
    out_ += ".item():\n";
    ++indent_;
    for (std::size_t i = 0; i < l.outputs.size(); ++i) {
      if (!l.carried[i].holds<ir::BufferArg>()) continue;
      statement();
      out_ += buffer(l.outputs[i]).name;
      out_ += " = ";
      append_arg(l.carried[i]);
      out_ += ".clone()\n";
    }
    --indent_;
  }
  statement();
  out_ += "while ";
  out_ += result;
  out_ += ".item():\n";
  ++indent_;
  subgraph_call(b.name, loop_args, l.additional, l.outputs);
  evaluate_condition();
  --indent_;
}

inline void FunctionEmitter::render(const ir::EnterDeviceContext& l) {
  if (auto valid = ir::validate(l.device); !valid) fail(valid.error().message);
  const bool guarded = l.device.index && (l.device.type == ir::DeviceType::cuda || l.device.type == ir::DeviceType::xpu);
  if (guarded) write_device_guard(l.device);
  open_block(Block::device, "EnterDeviceContext", guarded, guarded ? l.device.index : std::nullopt);
  blocks_.back().has_statement = guarded;  // torch.cuda.set_device(i)
}

inline void FunctionEmitter::render(const ir::EnterStreamContext& l) {
  if (l.stream == 0) fail("stream 0 is the device's default stream; a stream context names a side stream (> 0)");
  module_.uses_side_streams = true;
  statement();
  out_ += "with torch.cuda.stream(";
  append_side_stream(current_device_index(), l.stream);
  out_ += "):\n";
  open_block(Block::stream, "EnterStreamContext", true);
}

inline void FunctionEmitter::render(const ir::GetRawStream& l) {
  const int device = stream_device(l.device);
  write_stream_fetch(device, l.stream, stream_name(device, l.stream));
  remember_stream(device, l.stream);
}

/// Starts a statement line at the current indentation.
inline void FunctionEmitter::statement() {
  out_.append(static_cast<std::size_t>(indent_) * 4, ' ');
  // Up to the innermost block that owns an indentation level: a context
  // that renders no `with` line has no Python block of its own.
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    it->has_statement = true;
    if (it->indented) break;
  }
}

inline void FunctionEmitter::open_block(Block::Kind kind, std::string_view opened_by, bool indented,
                std::optional<int> device_index) {
  const bool scoped = kind == Block::subgraph;
  blocks_.push_back(Block{kind, opened_by, indented, false, device_index, fetched_streams_.size(),
                          scoped ? asserted_ : std::vector<char>{}, pending_asserts_});
  if (indented) ++indent_;
}

inline void FunctionEmitter::close_block(Block::Kind kind, std::string_view closed_by) {
  if (blocks_.empty() || blocks_.back().kind != kind) {
    if (kind == Block::auto_device) return;
    fail(std::string(closed_by) + " does not close the innermost open scope" +
         (blocks_.empty() ? std::string(" (none is open)")
                          : " (" + std::string(blocks_.back().opened_by) + " is)"));
  }
  Block& b = blocks_.back();
  if (b.indented && !b.has_statement) {
    out_.append(static_cast<std::size_t>(indent_) * 4, ' ');
    out_ += "pass\n";
  }
  if (b.indented) --indent_;
  if (b.kind == Block::subgraph) {
    fetched_streams_.resize(b.streams_before);
    asserted_ = std::move(b.asserted_before);
    pending_asserts_ = b.pending_before;
  }
  blocks_.pop_back();
}

inline void FunctionEmitter::write_device_guard(const ir::Device& d) {
  const std::string_view api = d.type == ir::DeviceType::xpu ? "xpu" : "cuda";
  statement();
  out_ += "with torch.";
  out_ += api;
  out_ += "._DeviceGuard(";
  append_integer(out_, *d.index);
  out_ += "):\n";
  out_.append(static_cast<std::size_t>(indent_ + 1) * 4, ' ');
  out_ += "torch.";
  out_ += api;
  out_ += ".set_device(";
  append_integer(out_, *d.index);
  out_ += ")\n";
}

inline std::optional<int> FunctionEmitter::current_device_index() const {
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it)
    if (it->device_index) return it->device_index;
  return std::nullopt;
}

inline int FunctionEmitter::stream_device(const ir::Device& d) const {
  if (d.type != ir::DeviceType::cuda || !d.index)
    fail("streams need a CUDA device with an index, not " + ir::quote_for_diagnostic(ir::to_string(d)));
  return *d.index;
}

inline std::string FunctionEmitter::stream_name(int device, std::uint32_t stream) {
  std::string name = "stream";
  append_integer(name, device);
  if (stream != 0) {
    name += '_';
    append_integer(name, stream);
  }
  return name;
}

inline void FunctionEmitter::append_side_stream(std::optional<int> device, std::uint32_t stream) {
  out_ += "side_streams[(";
  if (device) append_integer(out_, *device);
  else out_ += "torch.cuda.current_device()";
  out_ += ", ";
  append_integer(out_, stream);
  out_ += ")]";
}

inline void FunctionEmitter::write_stream_fetch(int device, std::uint32_t stream, std::string_view name) {
  if (name != "raw_stream") (void)helper_name(std::string(name));  // raw_stream is reserved
  statement();
  out_ += name;
  if (stream == 0) {
    module_.uses_raw_stream = true;
    out_ += " = get_raw_stream(";
    append_integer(out_, device);
    out_ += ")\n";
  } else {
    module_.uses_side_streams = true;
    out_ += " = ";
    append_side_stream(device, stream);
    out_ += ".cuda_stream\n";
  }
}

inline void FunctionEmitter::remember_stream(int device, std::uint32_t stream) {
  for (const auto& [d, s] : fetched_streams_)
    if (d == device && s == stream) return;
  fetched_streams_.emplace_back(device, stream);
}

/// The variable holding the raw stream for a launch: fetched once per
/// scope (`stream0 = get_raw_stream(0)`); inside a side-stream context
/// the current stream is fetched afresh per launch, as Inductor does.
inline std::string FunctionEmitter::stream_for(const ir::Device& d, std::uint32_t stream) {
  const int device = stream_device(d);
  bool in_stream_context = false;
  for (const Block& b : blocks_) in_stream_context = in_stream_context || b.kind == Block::stream;
  if (stream == 0 && in_stream_context) {
    write_stream_fetch(device, 0, "raw_stream");
    return "raw_stream";
  }
  std::string name = stream_name(device, stream);
  for (const auto& [fd, fs] : fetched_streams_)
    if (fd == device && fs == stream) return name;
  write_stream_fetch(device, stream, name);
  remember_stream(device, stream);
  return name;
}

inline void FunctionEmitter::append_arg_list(const std::vector<ir::Arg>& first, const std::vector<ir::Arg>& second) {
  bool any = false;
  for (const std::vector<ir::Arg>* list : {&first, &second})
    for (const ir::Arg& a : *list) {
      if (any) out_ += ", ";
      append_arg(a);
      any = true;
    }
}

inline void FunctionEmitter::subgraph_call(const std::string& name, const std::vector<ir::Arg>& args, const std::vector<ir::Arg>& more,
                   const std::vector<ir::BufferId>& outputs) {
  const std::string list = helper_name(name + "_args");
  statement();
  out_ += list;
  out_ += " = [";
  append_arg_list(args, more);
  out_ += "]\n";
  statement();
  if (!outputs.empty()) {
    out_ += '(';
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (i) out_ += ", ";
      out_ += buffer(outputs[i]).name;
    }
    out_ += outputs.size() == 1 ? ",) = " : ") = ";
  }
  out_ += global_callee(name, 's');
  out_ += '(';
  out_ += list;
  out_ += ")\n";
}

}  // namespace wrapir::python::detail
