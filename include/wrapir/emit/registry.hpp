#pragma once
/// \file
/// A registry of emit targets: each target is a name, a description, the
/// options it accepts, and a function that renders a program — into a
/// string it returns, or appended to a sink. `wrapir emit --target NAME`
/// selects from one; a consumer registers its own emitters next to the
/// built-in ones (emit/targets.hpp).
///
/// ```
/// wrapir::EmitterRegistry registry;
/// wrapir::register_builtin_targets(registry);            // python, text, dot
/// registry.add("launches", "one line per kernel launch",
///              [](const wrapir::Program& p, const wrapir::EmitOptions&) -> wrapir::Result<std::string> {...});
/// auto text = registry.emit("launches", program);       // Result<std::string>
/// auto done = registry.emit("python", program, sink);   // to a TextSink, a piece at a time
/// ```
///
/// A target may also stream (`EmitTarget::stream`, emit/text_sink.hpp):
/// `emit` to a `TextSink` then never holds its whole output (the built-in
/// `python` target does, which is how `wrapir emit -o` writes a large
/// module); a target that does not is rendered to a string and passed to
/// the sink in pieces.
///
/// Rules, each a diagnostic rather than a surprise:
/// - a target name is 1 to 64 characters of lowercase letters, digits, `-`
///   and `_`, starting with a letter and not ending with `-` or `_`
///   (`python`, `fx-python`, `my_target2`), so that it is safe on a command
///   line and in a file name;
/// - a name is registered once: a second `add` of the same name is refused
///   (replacing a built-in silently would change what `--target` means);
/// - looking up an unknown name lists the known ones;
/// - options are `KEY=VALUE` pairs; a key the target did not declare, or a
///   key given twice, is refused before the emitter runs; the emitter
///   validates the values (`EmitOptions::flag`, `integer`, `choice` help);
/// - an emitter that throws is turned into a diagnostic naming the target,
///   and the sink is left as it was whenever emission fails.
///
/// A registry is a plain value: build it, then read it from any number of
/// threads (adding is not synchronised).

#include <wrapir/detail/escape.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/text_sink.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace wrapir {

/// The `KEY=VALUE` options of one emission, in the order given.
struct EmitOptions {
  std::vector<std::pair<std::string, std::string>> values;

  /// The value of `key`, if given.
  [[nodiscard]] std::optional<std::string_view> get(std::string_view key) const noexcept {
    for (const auto& [k, v] : values)
      if (k == key) return std::string_view(v);
    return std::nullopt;
  }

  /// `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`), or `fallback`
  /// when not given.
  [[nodiscard]] Result<bool> flag(std::string_view key, bool fallback) const {
    const auto v = get(key);
    if (!v) return fallback;
    if (*v == "true" || *v == "1" || *v == "yes" || *v == "on") return true;
    if (*v == "false" || *v == "0" || *v == "no" || *v == "off") return false;
    return Diagnostic{"option '" + std::string(key) + "' takes true or false, not " + ir::quote_for_diagnostic(*v)};
  }

  /// An integer in [min, max], or `fallback` when not given.
  [[nodiscard]] Result<std::int64_t> integer(std::string_view key, std::int64_t fallback, std::int64_t min,
                                             std::int64_t max) const {
    const auto v = get(key);
    if (!v) return fallback;
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc{} || end != v->data() + v->size() || n < min || n > max)
      return Diagnostic{"option '" + std::string(key) + "' takes an integer from " + std::to_string(min) + " to " +
                        std::to_string(max) + ", not " + ir::quote_for_diagnostic(*v)};
    return n;
  }

  /// One of `choices`, or `fallback` when not given.
  [[nodiscard]] Result<std::string_view> choice(std::string_view key, std::string_view fallback,
                                                std::initializer_list<std::string_view> choices) const {
    const auto v = get(key);
    if (!v) return fallback;
    std::string list;
    for (std::string_view c : choices) {
      if (c == *v) return c;
      list += list.empty() ? "" : ", ";
      list += c;
    }
    return Diagnostic{"option '" + std::string(key) + "' takes one of " + list + ", not " +
                      ir::quote_for_diagnostic(*v)};
  }
};

/// An option a target accepts.
struct EmitOption {
  std::string name;
  std::string description;
};

/// Renders a program into a string it returns.
using EmitToString = std::function<Result<std::string>(const ir::Program&, const EmitOptions&)>;
/// Renders a program by appending to `out` (which it may leave changed on
/// failure: the registry restores it).
using EmitToSink = std::function<Result<void>(const ir::Program&, const EmitOptions&, std::string& out)>;
/// Renders a program to a `TextSink` (emit/text_sink.hpp) a piece at a time.
using EmitToTextSink = std::function<Result<void>(const ir::Program&, const EmitOptions&, const TextSink& sink)>;

/// One registered target.
struct EmitTarget {
  std::string name;
  std::string description;
  std::vector<EmitOption> options;
  EmitToSink emit;
  /// Optional: the same output written to a sink without holding it whole.
  EmitToTextSink stream{};
};

/// Whether `name` is a valid target name (see the file comment), or why not.
[[nodiscard]] inline Result<void> check_target_name(std::string_view name) {
  auto bad = [&](std::string why) -> Result<void> {
    return Diagnostic{"invalid emit target name " + ir::quote_for_diagnostic(name) + ": " + std::move(why)};
  };
  if (name.empty()) return bad("it is empty");
  if (name.size() > 64) return bad("it is longer than 64 characters");
  if (!(name[0] >= 'a' && name[0] <= 'z')) return bad("it must start with a lowercase letter");
  for (const char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
      return bad("expected lowercase letters, digits, '-' and '_' only");
  if (name.back() == '-' || name.back() == '_') return bad("it must not end with '-' or '_'");
  return {};
}

class EmitterRegistry {
 public:
  /// Registers `target`; refuses an invalid or taken name, an empty
  /// function, or an option declared twice or with an empty name.
  Result<void> add(EmitTarget target) {
    if (Result<void> ok = check_target_name(target.name); !ok) return ok;
    if (!target.emit)
      return Diagnostic{"emit target " + ir::quote_for_diagnostic(target.name) + " has no emitter function"};
    if (find(target.name))
      return Diagnostic{"emit target " + ir::quote_for_diagnostic(target.name) +
                        " is already registered; register yours under another name"};
    for (std::size_t i = 0; i < target.options.size(); ++i) {
      const std::string& o = target.options[i].name;
      bool valid = !o.empty() && o.size() <= 64;
      for (const char c : o) valid = valid && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
      if (!valid)
        return Diagnostic{"emit target " + ir::quote_for_diagnostic(target.name) + ": invalid option name " +
                          ir::quote_for_diagnostic(o) + " (lowercase letters, digits, '-' and '_')"};
      for (std::size_t j = 0; j < i; ++j)
        if (target.options[j].name == o)
          return Diagnostic{"emit target " + ir::quote_for_diagnostic(target.name) + " declares option " +
                            ir::quote_for_diagnostic(o) + " twice"};
    }
    // Kept sorted by name: listings and diagnostics are deterministic.
    const auto at = std::lower_bound(targets_.begin(), targets_.end(), target.name,
                                     [](const EmitTarget& t, const std::string& n) { return t.name < n; });
    targets_.insert(at, std::move(target));
    return {};
  }

  /// Registers an emitter that returns its text.
  Result<void> add(std::string name, std::string description, EmitToString emit,
                   std::vector<EmitOption> options = {}) {
    if (!emit) return add(EmitTarget{std::move(name), std::move(description), std::move(options), EmitToSink{}});
    EmitToSink sink = [emit = std::move(emit)](const ir::Program& p, const EmitOptions& o,
                                               std::string& out) -> Result<void> {
      Result<std::string> text = emit(p, o);
      if (!text) return std::move(text).error();
      out += text.value();
      return {};
    };
    return add(EmitTarget{std::move(name), std::move(description), std::move(options), std::move(sink)});
  }

  /// Registers an emitter that appends to a sink.
  Result<void> add(std::string name, std::string description, EmitToSink emit, std::vector<EmitOption> options = {}) {
    return add(EmitTarget{std::move(name), std::move(description), std::move(options), std::move(emit)});
  }

  /// The target called `name`, or null.
  [[nodiscard]] const EmitTarget* find(std::string_view name) const noexcept {
    const auto at = std::lower_bound(targets_.begin(), targets_.end(), name,
                                     [](const EmitTarget& t, std::string_view n) { return t.name < n; });
    return at != targets_.end() && at->name == name ? &*at : nullptr;
  }

  /// The target called `name`, or a diagnostic listing the known ones.
  [[nodiscard]] Result<const EmitTarget*> lookup(std::string_view name) const {
    if (const EmitTarget* t = find(name)) return t;
    return Diagnostic{"unknown emit target " + ir::quote_for_diagnostic(name) + "; known targets: " + known()};
  }

  /// The registered names, sorted.
  [[nodiscard]] std::vector<std::string_view> names() const {
    std::vector<std::string_view> out;
    out.reserve(targets_.size());
    for (const EmitTarget& t : targets_) out.push_back(t.name);
    return out;
  }

  /// "dot, python, text" (or "none").
  [[nodiscard]] std::string known() const {
    std::string out;
    for (const EmitTarget& t : targets_) {
      if (!out.empty()) out += ", ";
      out += t.name;
    }
    return out.empty() ? "none" : out;
  }

  [[nodiscard]] const std::vector<EmitTarget>& targets() const noexcept { return targets_; }

  /// Appends `program` rendered by `target` to `out`; on a diagnostic `out`
  /// is left as it was.
  Result<void> emit(std::string_view target, const ir::Program& program, std::string& out,
                    const EmitOptions& options = {}) const {
    Result<const EmitTarget*> t = lookup(target);
    if (!t) return std::move(t).error();
    const EmitTarget& tgt = *t.value();
    if (Result<void> ok = check_options(tgt, options); !ok) return ok;
    const std::size_t size = out.size();
    Result<void> done = Diagnostic{"emit target " + ir::quote_for_diagnostic(tgt.name) + " did not run"};
    try {
      done = tgt.emit(program, options, out);
    } catch (const detail::Failure& f) {
      done = f.diagnostic;
    } catch (const std::exception& e) {
      done = Diagnostic{"emit target " + ir::quote_for_diagnostic(tgt.name) + " failed: " +
                        detail::printable(std::string_view(e.what()).substr(0, 400), true)};
    }
    if (!done) out.resize(size);
    return done;
  }

  /// Writes `program` rendered by `target` to `sink`: through the target's
  /// `stream` where it has one, else rendered to a string first and passed
  /// on in `sink.piece_bytes` pieces. On a diagnostic the sink may have
  /// taken the start of the output (emit/text_sink.hpp).
  Result<void> emit(std::string_view target, const ir::Program& program, const TextSink& sink,
                    const EmitOptions& options = {}) const {
    Result<const EmitTarget*> t = lookup(target);
    if (!t) return std::move(t).error();
    const EmitTarget& tgt = *t.value();
    if (!tgt.stream) {
      std::string out;
      if (Result<void> done = emit(target, program, out, options); !done) return done;
      if (!sink.write) return Diagnostic{"the sink for emit target " + ir::quote_for_diagnostic(tgt.name) + " has no write function"};
      const std::size_t piece = sink.piece_bytes == 0 ? 1 : sink.piece_bytes;
      for (std::size_t at = 0; at < out.size(); at += piece)
        if (Result<void> written = sink.write(std::string_view(out).substr(at, piece)); !written)
          return Diagnostic{"writing the output of emit target " + ir::quote_for_diagnostic(tgt.name) +
                            " failed after " + std::to_string(at) + " bytes: " + written.error().to_string()};
      return {};
    }
    if (Result<void> ok = check_options(tgt, options); !ok) return ok;
    try {
      return tgt.stream(program, options, sink);
    } catch (const detail::Failure& f) {
      return f.diagnostic;
    } catch (const std::exception& e) {
      return Diagnostic{"emit target " + ir::quote_for_diagnostic(tgt.name) + " failed: " +
                        detail::printable(std::string_view(e.what()).substr(0, 400), true)};
    }
  }

  /// `program` rendered by `target`.
  [[nodiscard]] Result<std::string> emit(std::string_view target, const ir::Program& program,
                                         const EmitOptions& options = {}) const {
    std::string out;
    if (Result<void> done = emit(target, program, out, options); !done) return std::move(done).error();
    return out;
  }

 private:
  static Result<void> check_options(const EmitTarget& t, const EmitOptions& options) {
    for (std::size_t i = 0; i < options.values.size(); ++i) {
      const std::string& key = options.values[i].first;
      bool declared = false;
      for (const EmitOption& o : t.options) declared = declared || o.name == key;
      if (!declared) {
        std::string list;
        for (const EmitOption& o : t.options) list += (list.empty() ? "" : ", ") + o.name;
        return Diagnostic{"emit target " + ir::quote_for_diagnostic(t.name) + " has no option " +
                          ir::quote_for_diagnostic(key) +
                          (list.empty() ? std::string("; it takes none") : "; its options: " + list)};
      }
      for (std::size_t j = 0; j < i; ++j)
        if (options.values[j].first == key)
          return Diagnostic{"emit target " + ir::quote_for_diagnostic(t.name) + ": option " +
                            ir::quote_for_diagnostic(key) + " is given twice"};
    }
    return {};
  }

  std::vector<EmitTarget> targets_;
};

}  // namespace wrapir
