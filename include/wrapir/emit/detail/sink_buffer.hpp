#pragma once
/// \file
/// The text an emitter has rendered but not yet passed to its `TextSink`
/// (emit/text_sink.hpp): the emitter appends to `text()` as it would to its
/// output string and calls `pass_on_if_full()` between lines, so that it
/// holds about one piece at a time.

#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/text_sink.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace wrapir::detail {

class SinkBuffer {
 public:
  /// `what` names the text in a diagnostic ("the Python module").
  SinkBuffer(const TextSink& sink, std::string_view what) : sink_(sink), what_(what) {
    if (!sink_.write) fail(Diagnostic{"the sink for " + std::string(what_) + " has no write function"});
    // One piece and a line's slack; growing past it copies only pending text.
    text_.reserve(sink_.piece_bytes < (std::size_t{1} << 24) ? sink_.piece_bytes + 4096 : 4096);
  }

  /// Where the emitter appends.
  [[nodiscard]] std::string& text() noexcept { return text_; }

  void pass_on_if_full() {
    if (text_.size() >= sink_.piece_bytes) pass_on();
  }

  /// Passes every pending byte to the sink (none: no call); a sink that
  /// refuses is a diagnostic.
  void pass_on() {
    if (text_.empty()) return;
    Result<void> written = sink_.write(std::string_view(text_));
    if (!written)
      fail(Diagnostic{"writing " + std::string(what_) + " failed after " + std::to_string(passed_) +
                                      " bytes: " + written.error().to_string()});
    passed_ += text_.size();
    text_.clear();
  }

  /// The bytes the sink has taken so far.
  [[nodiscard]] std::size_t passed() const noexcept { return passed_; }

 private:
  const TextSink& sink_;
  std::string_view what_;
  std::string text_;
  std::size_t passed_ = 0;
};

}  // namespace wrapir::detail
