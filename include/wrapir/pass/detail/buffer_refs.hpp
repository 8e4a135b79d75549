#pragma once
/// \file
/// `for_each_buffer_ref(line, f)`: calls `f(BufferId)` for every buffer a
/// line names, in any field (arguments, views, outs, operands, results,
/// nested lists), through the lines' reflection, so that a new line kind
/// or field is covered without code here. Passes use it to find the last
/// line that touches a buffer.

#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/box.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/reflect.hpp>

#include <boost/variant2/variant.hpp>

#include <optional>
#include <string_view>
#include <variant>
#include <vector>

namespace wrapir::pass::detail {

/// The overloads are members so that each one sees all the others,
/// whatever their order (the field types nest: lists of args of buffers).
template <class F>
struct BufferRefVisitor {
  F& f;

  void operator()(ir::BufferId b) const { f(b); }
  void operator()(const ir::BufferArg& b) const { f(b.buffer); }
  void operator()(const ir::Arg& a) const {
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>())
      f(b->buffer);
    else if (const ir::ArgList* l = a.get_if<ir::ArgList>())
      (*this)(*l);
  }
  // Lists nest at most as deep as the verifier allows (64); a deeper list
  // in an unverified program only costs stack proportional to its depth.
  void operator()(const ir::ArgList& l) const {
    for (const ir::Arg& a : l.items) (*this)(a);
  }
  void operator()(const ir::NamedArg& a) const { (*this)(a.value); }
  void operator()(const ir::NamedBuffer& b) const { f(b.buffer.buffer); }
  template <class T>
  void operator()(const std::optional<T>& o) const {
    if (o) (*this)(*o);
  }
  template <class T>
  void operator()(const std::vector<T>& v) const {
    for (const T& x : v) (*this)(x);
  }
  template <class T>
  void operator()(const ir::Box<T>& b) const {
    (*this)(*b);
  }
  template <class T>
  void operator()(const ir::VectorBox<T>& v) const {
    for (const T& x : v) (*this)(x);
  }
  // Every other field type names no buffer.
  template <class T>
  void operator()(const T&) const {}
};

template <class F>
void for_each_buffer_ref(const ir::Line& line, F&& f) {
  std::visit(
      [&](const auto& l) {
        const BufferRefVisitor<std::remove_reference_t<F>> visit{f};
        ir::for_each_field(l, [&](std::string_view, const auto& field) { visit(field); });
      },
      line);
}

}  // namespace wrapir::pass::detail
