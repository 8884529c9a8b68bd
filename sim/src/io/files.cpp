// files.cpp — the simulated file system, one per host: a flat namespace of names, each a regular file held in
// memory or an AF_UNIX socket's name (world.hpp). There are no directories: every name may be
// created, and a relative name is taken from "/" (the simulated process's working directory).
// Writes reach the page cache; fsync and fdatasync make a file's bytes durable, and a disk crash
// (crash_disk) takes every file of its host back to that, torn at a sector boundary. Names (create, rename,
// unlink) are durable at once. Every file operation may fail with the io_error fault, a write or
// ftruncate that grows a file with io_no_space, and fsync may lie (fsync_lies).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <fcntl.h>
#include <sys/stat.h>

#include <weft/platform/fault.hpp>
#include <weft/sim/hooks.hpp>

#include "buffers.hpp"
#include "faults.hpp"
#include "world.hpp"

namespace weft::sim::io {

using platform::io_offset_current;
using platform::io_request;

int world::path_of(int dirfd, const char* path, std::string& out) {
  if (path == nullptr) return -EFAULT;
  const std::size_t length = strnlen(path, path_bytes_max + 1);
  if (length == 0) return -ENOENT;
  if (length > path_bytes_max) return -ENAMETOOLONG;
  if (path[0] == '/') {
    out.assign(path, length);
    return 0;
  }
  if (dirfd != AT_FDCWD) return lookup(dirfd) == nullptr ? -EBADF : -ENOTDIR;  // no directories
  out = "/";
  out.append(path, length);
  return 0;
}

int world::resize(inode& n, std::uint64_t size) {
  if (size > file_bytes_max) return -EFBIG;
  const std::uint64_t now = n.bytes.size();
  if (size > now && here().file_system_bytes + (size - now) > file_system_bytes_max) return -ENOSPC;
  if (size > now && strike(platform::fault::io_no_space)) return -ENOSPC;
  here().file_system_bytes = here().file_system_bytes - now + size;
  n.bytes.resize(size);
  return 0;
}

std::int64_t world::op_openat(const io_request& r) {
  std::string path;
  if (const int e = path_of(r.dirfd, r.path, path); e != 0) return e;
  const int access = r.flags & O_ACCMODE;
  if (access != O_RDONLY && access != O_WRONLY && access != O_RDWR) return -EINVAL;
  if ((r.flags & O_DIRECTORY) != 0) return (r.flags & O_CREAT) != 0 ? -EINVAL : -ENOTDIR;
  if (here().fds.size() >= open_fds_max) return -EMFILE;
  const bool writable = access != O_RDONLY;
  auto it = here().files.find(path);
  if (it != here().files.end()) {
    if ((r.flags & O_CREAT) != 0 && (r.flags & O_EXCL) != 0) return -EEXIST;
    if (it->second.file == nullptr) return -ENXIO;  // a socket's name
  } else {
    if ((r.flags & O_CREAT) == 0) return -ENOENT;
    it = here().files.emplace(path, fs_node{std::make_shared<inode>(++next_inode_, here().file_system_bytes), {}}).first;
  }
  const std::shared_ptr<inode> node = it->second.file;
  if ((r.flags & O_TRUNC) != 0 && writable) {
    if (const int e = resize(*node, 0); e != 0) return e;
  }
  auto f = std::make_shared<open_file>();
  f->node = node;
  f->readable = access != O_WRONLY;
  f->writable = writable;
  f->append = (r.flags & O_APPEND) != 0;
  return allocate_fd(descriptor{std::move(f), nullptr});
}

std::int64_t world::read_if_cached(const io_request& r) {
  if (caller() == nullptr) return -EAGAIN;  // a crashed incarnation: the submitted read fails
  if (r.opcode != platform::io_opcode::read || r.offset == io_offset_current) return -EOPNOTSUPP;
  descriptor* d = lookup(r.fd);
  if (d == nullptr || d->file == nullptr) return -EOPNOTSUPP;
  if (detail::fault_draw(page_cache_miss_one_in) == 0) return -EAGAIN;
  const step s = op_file_read(*d->file, r);
  // A struck fault (EIO) belongs to the submitted read, which draws its own.
  return s.result < 0 ? -EAGAIN : s.result;
}

world::step world::op_file_read(open_file& f, const io_request& r) {
  if (!f.readable) return finished(-EBADF);
  if (strike(platform::fault::io_error)) return finished(-EIO);
  const bool at_position = r.offset == io_offset_current;
  const std::uint64_t offset = at_position ? f.position : r.offset;
  const std::vector<char>& bytes = f.node->bytes;
  const buffers b(r);
  const std::size_t available = offset >= bytes.size() ? 0 : bytes.size() - static_cast<std::size_t>(offset);
  const std::size_t n = maybe_short(std::min(b.total(), available));
  if (n > 0) b.scatter(bytes.begin() + static_cast<std::ptrdiff_t>(offset), n);
  if (at_position) f.position = offset + n;
  return finished(static_cast<std::int64_t>(n));
}

world::step world::op_file_write(open_file& f, const io_request& r) {
  if (!f.writable) return finished(-EBADF);
  if (r.offset != io_offset_current && r.offset > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return finished(-EINVAL);
  }
  if (strike(platform::fault::io_error)) return finished(-EIO);
  const bool at_position = r.offset == io_offset_current;
  // O_APPEND writes at the end even with an offset, as Linux's pwrite does.
  const std::uint64_t offset = f.append ? f.node->bytes.size() : at_position ? f.position : r.offset;
  const buffers b(r);
  if (b.total() == 0) return finished(0);
  if (offset >= file_bytes_max) return finished(-EFBIG);
  // What fits below the file size limit is written, as Linux does.
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(b.total(), file_bytes_max - offset));
  n = maybe_short(n);
  if (offset + n > f.node->bytes.size()) {
    if (const int e = resize(*f.node, offset + n); e != 0) return finished(e);
  }
  b.gather(n, f.node->bytes.begin() + static_cast<std::ptrdiff_t>(offset));
  if (at_position || f.append) f.position = offset + n;
  return finished(static_cast<std::int64_t>(n));
}

std::int64_t world::op_fsync(open_file& f) {
  if (strike(platform::fault::io_error)) return -EIO;
  if (strike(platform::fault::fsync_lies)) return 0;  // the device claims the bytes are safe
  f.node->synced = f.node->bytes;
  return 0;
}

std::size_t world::open_files(std::uint32_t h) const {
  if (h >= hosts_.size()) return 0;
  const std::map<int, descriptor>& fds = hosts_[h].fds;
  return static_cast<std::size_t>(
      std::count_if(fds.begin(), fds.end(), [](const auto& entry) { return entry.second.file != nullptr; }));
}

std::size_t world::crash_disk(std::uint32_t h) {
  act_on(h);
  std::size_t lost = 0;
  for (auto& [name, node] : here().files) {  // by name: the draws do not depend on addresses
    if (!node.file || node.file->bytes == node.file->synced) continue;
    inode& n = *node.file;
    ++lost;
    // The first `reached` sectors of the current contents made it to the disk; the rest is what
    // the last fsync left there.
    const std::uint64_t sectors = (n.bytes.size() + disk_sector_bytes - 1) / disk_sector_bytes;
    const std::uint64_t reached = sim::detail::fault_draw(sectors + 1);
    const std::size_t upto = static_cast<std::size_t>(std::min<std::uint64_t>(reached * disk_sector_bytes, n.bytes.size()));
    std::vector<char> kept = n.synced;
    if (upto > kept.size()) kept.resize(upto);
    std::copy(n.bytes.begin(), n.bytes.begin() + static_cast<std::ptrdiff_t>(upto), kept.begin());
    here().file_system_bytes = here().file_system_bytes - n.bytes.size() + kept.size();
    n.bytes = std::move(kept);
    n.synced = n.bytes;
  }
  return lost;
}

std::int64_t world::op_ftruncate(open_file& f, const io_request& r) {
  if (!f.writable) return -EINVAL;
  if (r.offset > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return -EINVAL;
  if (strike(platform::fault::io_error)) return -EIO;
  return resize(*f.node, r.offset);
}

std::int64_t world::op_statx(const io_request& r) {
  auto* out = static_cast<struct statx*>(r.data);
  if (out == nullptr) return -EFAULT;
  std::shared_ptr<inode> file;
  bool is_socket = false;
  if ((r.flags & AT_EMPTY_PATH) != 0 && r.path != nullptr && r.path[0] == '\0') {
    descriptor* d = lookup(r.dirfd);
    if (d == nullptr) return -EBADF;
    if (d->file) file = d->file->node;
    is_socket = d->sock != nullptr;
  } else {
    std::string path;
    if (const int e = path_of(r.dirfd, r.path, path); e != 0) return e;
    const auto it = here().files.find(path);
    if (it == here().files.end()) return -ENOENT;
    file = it->second.file;
    is_socket = file == nullptr;
  }
  *out = {};
  out->stx_mask = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_INO | STATX_SIZE;
  out->stx_blksize = 4'096;
  out->stx_nlink = 1;
  if (is_socket) {
    out->stx_mode = S_IFSOCK | 0755;
  } else {
    out->stx_mode = S_IFREG | 0644;
    out->stx_ino = file->number;
    out->stx_size = file->bytes.size();
  }
  return 0;
}

std::int64_t world::op_unlinkat(const io_request& r) {
  if ((r.flags & ~AT_REMOVEDIR) != 0) return -EINVAL;
  std::string path;
  if (const int e = path_of(r.dirfd, r.path, path); e != 0) return e;
  const auto it = here().files.find(path);
  if (it == here().files.end()) return -ENOENT;
  if ((r.flags & AT_REMOVEDIR) != 0) return -ENOTDIR;
  here().files.erase(it);  // open descriptions keep the file's bytes until they close
  return 0;
}

std::int64_t world::op_renameat(const io_request& r) {
  std::string from;
  std::string to;
  if (const int e = path_of(r.dirfd, r.path, from); e != 0) return e;
  if (const int e = path_of(r.dirfd, r.path2, to); e != 0) return e;
  const auto it = here().files.find(from);
  if (it == here().files.end()) return -ENOENT;
  if (from == to) return 0;
  fs_node moved = std::move(it->second);
  here().files.erase(it);
  here().files[to] = std::move(moved);  // replaces whatever `to` named
  return 0;
}

}  // namespace weft::sim::io
