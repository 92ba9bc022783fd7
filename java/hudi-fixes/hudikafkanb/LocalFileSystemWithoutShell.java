package hudikafkanb;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
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
 * And Hudi's log reader wraps a stream over a bare {@code FSInputStream} in a buffer of its own (HadoopFSUtils, 16 MiB
 * for its metadata table's reader, which does not take the table's {@code hoodie.memory.dfs.buffer.max.size}): each a
 * humongous array that starts a collection, every few seconds in a coordinator of a hundred tables. A stream this file
 * system opens is wrapped once more, so that Hudi reads it through the buffers above ({@link #open}).
 *
 * And it lists a folder with one `stat` an entry. Hadoop's listing builds five paths an entry (each a URI parsed) and
 * stats it four times, then runs `ls -ld` in a process of its own when a caller asks an entry's owner or permission;
 * Hudi lists its timeline's folder, a few hundred files, a dozen times in every commit, for the names alone: half
 * of a small commit's CPU went there. The statuses are the ones Hadoop gives (the same paths, sizes, times, owners
 * and permissions), read at once.
 */
public class LocalFileSystemWithoutShell extends LocalFileSystem {

  /** The largest read buffer this file system makes (bytes). */
  static final int MAX_READ_BUFFER = 64 * 1024;

  public LocalFileSystemWithoutShell() {
    super(new Raw());
  }

  /** Hadoop's stream, checksums verified, in a stream that is no {@code FSInputStream} (see above). */
  @Override
  public FSDataInputStream open(Path path, int bufferSize) throws IOException {
    return new FSDataInputStream(super.open(path, bufferSize));
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

    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
      File folder = pathToFile(path);
      if (!folder.isDirectory()) {
        return super.listStatus(path); // a file, or nothing: Hadoop's own answer (or its FileNotFoundException)
      }
      String parent = new Path(folder.getAbsolutePath()).makeQualified(getUri(), getWorkingDirectory()).toString();
      long blockSize = getDefaultBlockSize(path);
      List<FileStatus> statuses = new ArrayList<>();
      try (DirectoryStream<java.nio.file.Path> entries = Files.newDirectoryStream(folder.toPath())) {
        for (java.nio.file.Path entry : entries) {
          String name = entry.getFileName().toString();
          PosixFileAttributes attributes;
          try {
            attributes = Files.readAttributes(entry, PosixFileAttributes.class); // through a link, as Hadoop's
          } catch (NoSuchFileException gone) {
            continue; // deleted since the folder was read, as Hadoop skips it
          }
          statuses.add(new FileStatus(attributes.size(), attributes.isDirectory(), 1, blockSize,
              attributes.lastModifiedTime().toMillis(), 0, mode(attributes.permissions()),
              attributes.owner().getName(), attributes.group().getName(), child(parent, name)));
        }
      }
      return statuses.toArray(new FileStatus[0]);
    }
  }

  /** Names a URI takes as they are (most of a table's: digits, letters, dots, dashes, underscores, `=`). */
  static final Pattern PLAIN_NAME = Pattern.compile("[A-Za-z0-9._=-]+");

  /** The path of `name` in the qualified folder `parent`, as Hadoop's listing names it. */
  static Path child(String parent, String name) {
    if (PLAIN_NAME.matcher(name).matches()) { // a folder's stream never names "." or ".."
      return new Path(URI.create(parent.endsWith("/") ? parent + name : parent + "/" + name));
    }
    return new Path(new Path(parent), new Path(null, null, name)); // Hadoop's own way: quoting, colons
  }

  static FsPermission mode(Set<PosixFilePermission> bits) {
    int mode = 0;
    for (PosixFilePermission bit : bits) {
      mode |= 0400 >> bit.ordinal(); // OWNER_READ ... OTHERS_EXECUTE, in the order of the mode's bits
    }
    return new FsPermission((short) mode);
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
