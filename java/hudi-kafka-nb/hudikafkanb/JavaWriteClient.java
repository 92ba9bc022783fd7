package hudikafkanb;

import org.apache.hudi.client.HoodieJavaWriteClient;
import org.apache.hudi.common.engine.HoodieEngineContext;
import org.apache.hudi.common.model.HoodieCommitMetadata;
import org.apache.hudi.common.model.HoodieTableType;
import org.apache.hudi.common.model.WriteConcurrencyMode;
import org.apache.hudi.common.model.WriteOperationType;
import org.apache.hudi.common.table.HoodieTableMetaClient;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.config.HoodieWriteConfig;
import org.apache.hudi.table.HoodieJavaTable;
import org.apache.hudi.table.HoodieTable;

/**
 * Hudi's Java write client, with three differences.
 *
 * A write into a table whose metadata table exists leaves that metadata table's services to
 * {@link #initTableWithMetadataServices}: Hudi's write clients open a writer of the metadata table as each write begins,
 * to create the metadata table if it is missing, then run its compaction, cleaning and archival, whether or not any is
 * due: a fifth of the coordinator's CPU in a small commit. The coordinator runs those services itself between commits,
 * when the metadata table has a compaction due (table.hudi.metadata_services_due), so a write opens that writer only
 * where there is no metadata table yet.
 *
 * A merge-on-read table is a {@link MergeOnReadTable}: an upsert leaves file slices with log files to their log files.
 *
 * A commit builds the table (its meta client, timeline and file system view) to check it against other writers' commits
 * and to carry rolling metadata keys forward only when there are other writers or such keys ({@link #preCommit}): Hudi
 * builds it at every commit, and a single writer's check then does nothing with it.
 */
public class JavaWriteClient<T> extends HoodieJavaWriteClient<T> {

  private boolean metadataServices = false;

  public JavaWriteClient(HoodieEngineContext context, HoodieWriteConfig config) {
    super(context, config);
  }

  /** What Hudi's {@code initTable} does as a write begins, the metadata table's services included. */
  public void initTableWithMetadataServices(WriteOperationType operation, Option<String> instant) {
    metadataServices = true;
    try {
      initTable(operation, instant);
    } finally {
      metadataServices = false;
    }
  }

  @Override
  protected void initMetadataTable(Option<String> instant, HoodieTableMetaClient metaClient) {
    if (metadataServices || !metaClient.getTableConfig().isMetadataTableAvailable()) {
      super.initMetadataTable(instant, metaClient);
    }
  }

  @Override
  protected void preCommit(HoodieCommitMetadata metadata) {
    if (config.getWriteConcurrencyMode() != WriteConcurrencyMode.SINGLE_WRITER
        || !config.getRollingMetadataKeys().isEmpty()) {
      super.preCommit(metadata);
    }
  }

  @Override
  protected HoodieTable createTable(HoodieWriteConfig config) {
    return createTableAndValidate(config, createMetaClient(true), JavaWriteClient::table);
  }

  @Override
  protected HoodieTable createTable(HoodieWriteConfig config, HoodieTableMetaClient metaClient) {
    return createTableAndValidate(config, metaClient, JavaWriteClient::table);
  }

  private static <T> HoodieTable table(HoodieWriteConfig config, HoodieEngineContext context,
                                       HoodieTableMetaClient metaClient) {
    return metaClient.getTableType() == HoodieTableType.MERGE_ON_READ
        ? new MergeOnReadTable<T>(config, context, metaClient)
        : HoodieJavaTable.create(config, context, metaClient);
  }
}
