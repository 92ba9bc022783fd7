package hudikafkanb;

import org.apache.hudi.client.WriteStatus;
import org.apache.hudi.client.common.HoodieJavaEngineContext;
import org.apache.hudi.common.engine.HoodieEngineContext;
import org.apache.hudi.common.model.FileSlice;
import org.apache.hudi.common.model.HoodieRecord;
import org.apache.hudi.common.table.HoodieTableMetaClient;
import org.apache.hudi.common.table.timeline.HoodieInstant;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.config.HoodieWriteConfig;
import org.apache.hudi.exception.HoodieException;
import org.apache.hudi.table.HoodieJavaMergeOnReadTable;
import org.apache.hudi.table.HoodieTable;
import org.apache.hudi.table.WorkloadProfile;
import org.apache.hudi.table.action.HoodieWriteMetadata;
import org.apache.hudi.table.action.commit.JavaUpsertPartitioner;
import org.apache.hudi.table.action.commit.Partitioner;
import org.apache.hudi.table.action.commit.SmallFile;
import org.apache.hudi.table.action.deltacommit.JavaUpsertDeltaCommitActionExecutor;

import java.lang.reflect.Field;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Hudi's merge-on-read table of its Java engine, except that an upsert tops up only the small base files whose file
 * slice has no log files, as Hudi's Spark engine does.
 *
 * Hudi 1.2's Java engine takes any small base file for new records and rewrites it with them, merging the base file
 * alone: the updates and deletes its slice's log files held are lost (a deleted row came back). Spark's engine leaves
 * such a slice to its log files, and so does this table: updates of its keys go to a new log file, new records to a
 * base file of a slice without log files or to a new file group.
 */
public class MergeOnReadTable<T> extends HoodieJavaMergeOnReadTable<T> {

  public MergeOnReadTable(HoodieWriteConfig config, HoodieEngineContext context, HoodieTableMetaClient metaClient) {
    super(config, context, metaClient);
  }

  @Override
  public HoodieWriteMetadata<List<WriteStatus>> upsert(HoodieEngineContext context, String instantTime,
                                                       List<HoodieRecord<T>> records) {
    return new Upsert<>((HoodieJavaEngineContext) context, config, this, instantTime, records).execute();
  }

  /** Hudi's upsert of a delta commit with {@link SlicesWithoutLogFiles} as its partitioner. */
  static class Upsert<T> extends JavaUpsertDeltaCommitActionExecutor<T> {

    Upsert(HoodieJavaEngineContext context, HoodieWriteConfig config, HoodieTable table, String instantTime,
           List<HoodieRecord<T>> records) {
      super(context, config, table, instantTime, records);
    }

    @Override
    public Partitioner getUpsertPartitioner(WorkloadProfile profile) {
      JavaUpsertPartitioner<T> partitioner = new SlicesWithoutLogFiles<>(profile, context, table, config);
      // the delta commit merges updates of its partitioner's small files into new base files, and keeps that
      // partitioner in a private field of its base class: it must be this one
      try {
        Field field = JavaUpsertDeltaCommitActionExecutor.class.getSuperclass().getDeclaredField("partitioner");
        field.setAccessible(true);
        field.set(this, partitioner);
      } catch (ReflectiveOperationException e) {
        throw new HoodieException("Hudi's Java delta commit keeps no partitioner where hudi-kafka-nb expects it", e);
      }
      return partitioner;
    }
  }

  /** Hudi's upsert partitioner whose small files are only those of file slices without log files. */
  static class SlicesWithoutLogFiles<T> extends JavaUpsertPartitioner<T> {

    SlicesWithoutLogFiles(WorkloadProfile profile, HoodieEngineContext context, HoodieTable table,
                          HoodieWriteConfig config) {
      super(profile, context, table, config);
    }

    @Override
    protected List<SmallFile> getSmallFiles(String partitionPath) {
      List<SmallFile> small = super.getSmallFiles(partitionPath);
      if (small.isEmpty()) {
        return small;
      }
      Option<HoodieInstant> latest = table.getMetaClient().getCommitsTimeline().filterCompletedInstants().lastInstant();
      // file groups under a pending compaction are left out too, as Spark's engine does
      Set<String> withoutLogs = table.getSliceView()
          .getLatestFileSlicesBeforeOrOn(partitionPath, latest.get().requestedTime(), false)
          .filter(slice -> !slice.hasLogFiles())
          .map(FileSlice::getFileId)
          .collect(Collectors.toSet());
      return small.stream().filter(f -> withoutLogs.contains(f.location.getFileId())).collect(Collectors.toList());
    }
  }
}
