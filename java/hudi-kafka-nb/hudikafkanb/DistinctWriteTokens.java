package hudikafkanb;

import org.apache.hudi.client.SparkTaskContextSupplier;
import org.apache.hudi.client.common.HoodieSparkEngineContext;
import org.apache.spark.api.java.JavaSparkContext;

import java.security.SecureRandom;
import java.util.function.Supplier;

/**
 * A Spark engine context whose write handles name their files with write tokens no other process repeats.
 *
 * Hudi names a log file after its file group, instant, version and a write token made of the Spark task's partition,
 * stage and attempt ids. Those ids count from zero in every Spark application, so two participants that write log
 * files of one file group (a bucket) into one instant, each in its own Spark, can make the same name, and on an object
 * store the second file replaces the first. Here the attempt id of every token carries a random offset drawn once per
 * process (below 2^40, so the token stays a short number): names of two processes differ, those of one process still
 * follow its tasks.
 */
public class DistinctWriteTokens extends HoodieSparkEngineContext {

  /** Spark's task ids with this process's offset added to the attempt id. */
  public static class OffsetAttemptIds extends SparkTaskContextSupplier {
    private final long offset;

    public OffsetAttemptIds(long offset) {
      this.offset = offset;
    }

    @Override
    public Supplier<Long> getAttemptIdSupplier() {
      Supplier<Long> spark = super.getAttemptIdSupplier();
      long add = offset;
      return () -> spark.get() + add;
    }
  }

  private static final long OFFSET = (new SecureRandom().nextLong() >>> 24) + 1;

  public DistinctWriteTokens(JavaSparkContext jsc) {
    super(jsc);
    this.taskContextSupplier = new OffsetAttemptIds(OFFSET);
  }

  public static long offset() {
    return OFFSET;
  }
}
