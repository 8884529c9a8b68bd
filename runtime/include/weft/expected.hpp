// weft/expected.hpp — a value or a typed error (the C++23 std::expected shape, for C++20).
//
// Every fallible operation of weft answers with one: a full queue says `full`, a closed runtime
// says `closed`, a failed task says `panicked` — never a silent drop, never a bare bool.
#pragma once

#include <weft/compiler_support.hpp>

#include <type_traits>
#include <utility>
#include <variant>

#include <weft/platform/assert.hpp>

namespace weft {

template <class E>
class unexpected {
 public:
  constexpr explicit unexpected(E error) : error_(std::move(error)) {}
  constexpr const E& error() const& noexcept { return error_; }
  constexpr E&& error() && noexcept { return std::move(error_); }

 private:
  E error_;
};

template <class E>
unexpected(E) -> unexpected<E>;

template <class T, class E>
class [[nodiscard]] expected {
 public:
  using value_type = T;
  using error_type = E;

  template <class U = T>
    requires std::is_constructible_v<T, U&&>
  constexpr expected(U&& value) : storage_(std::in_place_index<0>, std::forward<U>(value)) {}
  constexpr expected(unexpected<E> error)
      : storage_(std::in_place_index<1>, std::move(error).error()) {}

  constexpr bool has_value() const noexcept { return storage_.index() == 0; }
  constexpr explicit operator bool() const noexcept { return has_value(); }

  constexpr T& value() & {
    WEFT_ASSERT(has_value());
    return std::get<0>(storage_);
  }
  constexpr const T& value() const& {
    WEFT_ASSERT(has_value());
    return std::get<0>(storage_);
  }
  constexpr T&& value() && {
    WEFT_ASSERT(has_value());
    return std::get<0>(std::move(storage_));
  }
  constexpr T& operator*() & { return value(); }
  constexpr T&& operator*() && { return std::move(*this).value(); }
  constexpr T* operator->() { return &value(); }

  constexpr const E& error() const& {
    WEFT_ASSERT(!has_value());
    return std::get<1>(storage_);
  }
  constexpr E&& error() && {
    WEFT_ASSERT(!has_value());
    return std::get<1>(std::move(storage_));
  }

  template <class U>
  constexpr T value_or(U&& fallback) && {
    return has_value() ? std::get<0>(std::move(storage_)) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  std::variant<T, E> storage_;
};

template <class E>
class [[nodiscard]] expected<void, E> {
 public:
  using value_type = void;
  using error_type = E;

  constexpr expected() noexcept = default;
  constexpr expected(unexpected<E> error) : error_(std::move(error).error()), failed_(true) {}

  constexpr bool has_value() const noexcept { return !failed_; }
  constexpr explicit operator bool() const noexcept { return has_value(); }
  constexpr void value() const { WEFT_ASSERT(has_value()); }
  constexpr const E& error() const& {
    WEFT_ASSERT(!has_value());
    return error_;
  }
  constexpr E&& error() && {
    WEFT_ASSERT(!has_value());
    return std::move(error_);
  }

 private:
  E error_{};
  bool failed_ = false;
};

}  // namespace weft
