/*
 * hudi-kafka-nb: a replacement for Hudi 1.2.0's class of this name, loaded before the bundle's (see nbs/44_spark.ipynb,
 * "One class of Hudi's bundle is replaced"). Fixed upstream by apache/hudi#19936 (in Hudi 1.2.1's modules): this class
 * goes once the pinned bundle holds that fix.
 *
 * Hudi reads each HFile block of a metadata-table log file through an "inline" file: a window of the log file, opened as
 * a stream of the outer file. In 1.2.0 closing the window never closes the outer stream, so every metadata lookup on
 * S3A leaves one HTTP connection leased until the process exits: once the table cleans, some ten a second, and after
 * the pool's 96 every S3 request of the process waits and fails ("Timeout waiting for connection from pool").
 *
 * This class keeps the 1.2.0 constructor and behaviour (positions relative to the window, reads past it refused) and
 * closes the outer stream with the window.
 */
package org.apache.hudi.hadoop.fs.inline;

import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.PositionedReadable;
import org.apache.hadoop.fs.Seekable;

import java.io.IOException;
import java.io.InputStream;

public class InLineFsDataInputStream extends FSDataInputStream {

  private final FSDataInputStream outer;

  public InLineFsDataInputStream(long startOffset, FSDataInputStream outerStream, long length) throws IOException {
    super(new Window(outerStream, startOffset, length));
    this.outer = outerStream;
    outerStream.seek(startOffset);
  }

  @Override
  public void setReadahead(Long readahead) throws IOException {
    outer.setReadahead(readahead);
  }

  @Override
  public void setDropBehind(Boolean dropBehind) throws IOException {
    outer.setDropBehind(dropBehind);
  }

  @Override
  public void unbuffer() {
    outer.unbuffer();
  }

  /** The bytes [start, start + length) of the outer stream, as a stream of their own; closing it closes the outer stream. */
  private static final class Window extends InputStream implements Seekable, PositionedReadable {
    private final FSDataInputStream outer;
    private final long start;
    private final long length;

    Window(FSDataInputStream outer, long start, long length) {
      this.outer = outer;
      this.start = start;
      this.length = length;
    }

    private void within(long position, long count, String what) throws IOException {
      if (position < 0 || position + count > length) {
        throw new IOException(what + " at " + position + " (+" + count + ") is outside the inline content of " + length + " bytes");
      }
    }

    @Override
    public int read() throws IOException {
      return getPos() < length ? outer.read() : -1;
    }

    @Override
    public int read(byte[] buffer, int offset, int count) throws IOException {
      long left = length - getPos();
      if (left <= 0) {
        return count == 0 ? 0 : -1;
      }
      return outer.read(buffer, offset, (int) Math.min(count, left));
    }

    @Override
    public long getPos() throws IOException {
      return outer.getPos() - start;
    }

    @Override
    public void seek(long position) throws IOException {
      within(position, 0, "A seek");
      outer.seek(start + position);
    }

    @Override
    public boolean seekToNewSource(long position) throws IOException {
      within(position, 0, "A seek");
      return outer.seekToNewSource(start + position);
    }

    @Override
    public int read(long position, byte[] buffer, int offset, int count) throws IOException {
      within(position, count, "A read");
      return outer.read(start + position, buffer, offset, count);
    }

    @Override
    public void readFully(long position, byte[] buffer, int offset, int count) throws IOException {
      within(position, count, "A read");
      outer.readFully(start + position, buffer, offset, count);
    }

    @Override
    public void readFully(long position, byte[] buffer) throws IOException {
      readFully(position, buffer, 0, buffer.length);
    }

    @Override
    public void close() throws IOException {
      outer.close();
    }
  }
}
