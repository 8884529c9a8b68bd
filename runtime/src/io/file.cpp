// file.cpp — file operations through staging buffers and the loop's driver.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>

#include <weft/io/file.hpp>

namespace weft {

namespace detail {

// How much read_to_end asks for per read.
constexpr std::size_t read_to_end_chunk = 64 * 1024;

namespace {

template <class T>
expected<T, std::error_code> failure(std::int64_t result) {
  return unexpected(io_error_code(result));
}
}  // namespace

expected<std::size_t, std::error_code> file_read_finish::operator()(file_op* op, std::int64_t result) const {
  if (result < 0) return failure<std::size_t>(result);
  if (op != nullptr && result > 0) std::memcpy(dst.data(), op->staging.get(), static_cast<std::size_t>(result));
  return static_cast<std::size_t>(result);
}
expected<std::size_t, std::error_code> file_count_finish::operator()(const file_op*, std::int64_t result) const {
  if (result < 0) return failure<std::size_t>(result);
  return static_cast<std::size_t>(result);
}
expected<void, std::error_code> file_void_finish::operator()(const file_op*, std::int64_t result) const {
  if (result < 0) return unexpected(io_error_code(result));
  return {};
}
expected<std::uint64_t, std::error_code> file_size_finish::operator()(const file_op* op, std::int64_t result) const {
  if (result < 0) return failure<std::uint64_t>(result);
  if (op == nullptr || (op->stx.stx_mask & STATX_SIZE) == 0) return failure<std::uint64_t>(-EIO);
  return static_cast<std::uint64_t>(op->stx.stx_size);
}
expected<int, std::error_code> file_fd_finish::operator()(const file_op*, std::int64_t result) const {
  if (result < 0) return failure<int>(result);
  return static_cast<int>(result);
}

// An operation on an open file's descriptor, with `staging` bytes of its own; EBADF at once on a
// closed file.
template <class Finish>
io_leaf<file_op, Finish> on_fd(const stream_ref& core, platform::io_opcode code, std::size_t staging,
                               Finish finish, const char* what) {
  if (!core || core->fd < 0) return {-EBADF, std::move(finish)};
  auto op = std::make_unique<file_op>(staging, core);
  op->opcode = code;
  op->fd = core->fd;
  op->data = op->staging.get();
  op->size = staging;
  return {core->owner, std::move(op), std::move(finish), what};
}

bool file_read_leaf::try_now() {
  if (!core_ || core_->fd < 0 || !core_->reads_inline) return false;
  platform::driver& d = core_->owner.driver("file::read_at");
  platform::io_request r;
  r.opcode = platform::io_opcode::read;
  r.fd = core_->fd;
  r.data = dst_.data();
  r.size = std::min(dst_.size(), io_staging_max);
  r.offset = offset_;
  const std::int64_t n = d.try_now(r);
  if (n >= 0) {
    now_ = n;
    answered_ = true;
    return true;
  }
  if (n != -EAGAIN) core_->reads_inline = false;  // this descriptor is never read inline
  return false;
}

file_read_leaf::inner_leaf file_read_leaf::submitted() {
  auto leaf = on_fd(core_, platform::io_opcode::read, std::min(dst_.size(), io_staging_max), file_read_finish{dst_},
                    "file::read_at");
  if (file_op* op = leaf.operation()) op->offset = offset_;
  return leaf;
}

namespace {
// An operation on a path (no descriptor), on the current loop. The operation keeps the paths:
// the kernel reads them after submission.
template <class Finish>
io_leaf<file_op, Finish> on_path(platform::io_opcode code, std::string path, std::string path2, int flags,
                                 std::uint32_t mode, Finish finish, const char* what) {
  io_owner owner = io_owner::current(what);
  auto op = std::make_unique<file_op>(0, stream_ref());
  op->path = std::move(path);
  op->path2 = std::move(path2);
  if (code == platform::io_opcode::openat) op->opener = owner;
  platform::io_request& r = *op;
  r.opcode = code;
  r.path = op->path.c_str();
  r.path2 = op->path2.c_str();
  r.flags = flags;
  r.mode = mode;
  return {std::move(owner), std::move(op), std::move(finish), what};
}
}  // namespace

}  // namespace detail


task<expected<file, std::error_code>> file::open(std::string path, open_options options) {
  if (!options.read && !options.write && !options.append) {
    co_return unexpected(std::make_error_code(std::errc::invalid_argument));
  }
  if (options.mode > 07777) co_return unexpected(std::make_error_code(std::errc::invalid_argument));
  int flags = O_CLOEXEC;
  const bool writing = options.write || options.append;
  flags |= options.read && writing ? O_RDWR : (writing ? O_WRONLY : O_RDONLY);
  if (options.append) flags |= O_APPEND;
  if (options.create) flags |= O_CREAT;
  if (options.truncate) flags |= O_TRUNC;
  if (options.exclusive) flags |= O_EXCL;
  detail::io_owner owner = detail::io_owner::current("file::open");
  auto fd = co_await detail::on_path(platform::io_opcode::openat, std::move(path), {}, flags, options.mode,
                                     detail::file_fd_finish{}, "file::open");
  if (!fd) co_return unexpected(fd.error());
  co_return file(detail::stream_ref(new detail::stream_core(std::move(owner), *fd, false)), options.append);
}

task<expected<std::vector<std::byte>, std::error_code>> file::read_all(std::string path) {
  auto f = co_await open(std::move(path));
  if (!f) co_return unexpected(f.error());
  co_return co_await f->read_to_end();
}

file::void_leaf file::remove(std::string path) {
  return detail::on_path(platform::io_opcode::unlinkat, std::move(path), {}, 0, 0, detail::file_void_finish{},
                         "file::remove");
}

file::void_leaf file::rename(std::string from, std::string to) {
  return detail::on_path(platform::io_opcode::renameat, std::move(from), std::move(to), 0, 0,
                         detail::file_void_finish{}, "file::rename");
}

file::read_leaf file::read_at(std::span<std::byte> dst, std::uint64_t offset) {
  return {core_, dst, offset};
}

file::count_leaf file::write_at(std::span<const std::byte> src, std::uint64_t offset) {
  const std::size_t n = std::min(src.size(), detail::io_staging_max);
  auto leaf = detail::on_fd(core_, platform::io_opcode::write, n, detail::file_count_finish{}, "file::write_at");
  if (detail::file_op* op = leaf.operation()) {
    if (n > 0) std::memcpy(op->staging.get(), src.data(), n);  // an empty span's data may be null
    op->offset = append_ ? platform::io_offset_current : offset;
  }
  return leaf;
}

task<expected<std::size_t, std::error_code>> file::read(std::span<std::byte> dst) {
  auto n = co_await read_at(dst, position_);
  if (n) position_ += *n;
  co_return n;
}

task<expected<std::size_t, std::error_code>> file::write(std::span<const std::byte> src) {
  auto n = co_await write_at(src, position_);
  if (n) position_ += *n;
  co_return n;
}

task<expected<std::vector<std::byte>, std::error_code>> file::read_to_end() {
  std::vector<std::byte> all;
  for (;;) {
    const std::size_t at = all.size();
    all.resize(at + detail::read_to_end_chunk);
    auto n = co_await read(std::span<std::byte>(all.data() + at, detail::read_to_end_chunk));
    if (!n) co_return unexpected(n.error());
    all.resize(at + *n);
    if (*n == 0) co_return all;
  }
}

file::void_leaf file::sync_all() {
  return detail::on_fd(core_, platform::io_opcode::fsync, 0, detail::file_void_finish{}, "file::sync_all");
}

file::void_leaf file::sync_data() {
  auto leaf = detail::on_fd(core_, platform::io_opcode::fsync, 0, detail::file_void_finish{}, "file::sync_data");
  if (detail::file_op* op = leaf.operation()) op->flags = platform::io_fsync_data_only;
  return leaf;
}

file::size_leaf file::size() {
  auto leaf = detail::on_fd(core_, platform::io_opcode::statx, 0, detail::file_size_finish{}, "file::size");
  if (detail::file_op* op = leaf.operation()) {
    op->dirfd = op->fd;
    static_cast<platform::io_request&>(*op).path = "";
    op->flags = AT_EMPTY_PATH;
    op->mode = STATX_SIZE;
    op->data = &op->stx;
  }
  return leaf;
}

file::void_leaf file::set_len(std::uint64_t length) {
  auto leaf = detail::on_fd(core_, platform::io_opcode::ftruncate, 0, detail::file_void_finish{}, "file::set_len");
  if (detail::file_op* op = leaf.operation()) op->offset = length;
  return leaf;
}

}  // namespace weft
