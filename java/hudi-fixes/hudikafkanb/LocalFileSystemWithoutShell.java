package hudikafkanb;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.nativeio.NativeIO;

/**
 * Hadoop's local file system (checksum files and all), setting permissions through Java instead of a child process.
 *
 * Without Hadoop's native library, which pyspark does not ship, RawLocalFileSystem sets the permission of every file
 * and folder it creates by running `chmod` in a process of its own: about 10 ms of CPU for a file in a new folder
 * (the folder, the file and its checksum file), and some thirty such processes in every commit of a Hudi table with
 * its metadata table. Java's own call sets the same bits. With the native library, or for a permission Java cannot
 * express (the sticky bit), Hadoop's own way is kept.
 *
 * It also reads through a buffer of at most 64 KiB. Hudi opens each HFile of its metadata table with the file system's
 * block size as the buffer (32 MiB locally), dozens in a commit, for files of a few KiB: each open a fresh array the
 * size of a block for the garbage collector. The page cache buffers a local disk; large reads bypass the buffer anyway.
 */
public class LocalFileSystemWithoutShell extends LocalFileSystem {

  /** The largest read buffer this file system makes (bytes). */
  static final int MAX_READ_BUFFER = 64 * 1024;

  public LocalFileSystemWithoutShell() {
    super(new Raw());
  }

  /** The raw local file system under the checksums: `setPermission` in process, read buffers of at most 64 KiB. */
  public static class Raw extends RawLocalFileSystem {
    @Override
    public FSDataInputStream open(Path path, int bufferSize) throws IOException {
      return super.open(path, Math.min(bufferSize, MAX_READ_BUFFER));
    }

    @Override
    public void setPermission(Path path, FsPermission permission) throws IOException {
      if (NativeIO.isAvailable() || permission.getStickyBit()) {
        super.setPermission(path, permission);
        return;
      }
      Files.setPosixFilePermissions(pathToFile(path).toPath(), posix(permission));
    }
  }

  static Set<PosixFilePermission> posix(FsPermission permission) {
    Set<PosixFilePermission> bits = EnumSet.noneOf(PosixFilePermission.class);
    add(bits, permission.getUserAction(), PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);
    add(bits, permission.getGroupAction(), PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE);
    add(bits, permission.getOtherAction(), PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);
    return bits;
  }

  private static void add(Set<PosixFilePermission> bits, FsAction action,
                          PosixFilePermission read, PosixFilePermission write, PosixFilePermission execute) {
    if (action.implies(FsAction.READ)) bits.add(read);
    if (action.implies(FsAction.WRITE)) bits.add(write);
    if (action.implies(FsAction.EXECUTE)) bits.add(execute);
  }
}
