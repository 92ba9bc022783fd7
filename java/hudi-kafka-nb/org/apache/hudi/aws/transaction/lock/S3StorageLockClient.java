package org.apache.hudi.aws.transaction.lock;

import com.amazonaws.SdkClientException;
import com.amazonaws.services.s3.AmazonS3;
import com.amazonaws.services.s3.model.AmazonS3Exception;
import com.amazonaws.services.s3.model.ObjectMetadata;
import com.amazonaws.services.s3.model.PutObjectRequest;
import com.amazonaws.services.s3.model.PutObjectResult;
import com.amazonaws.services.s3.model.S3Object;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hudi.client.transaction.lock.StorageLockClient;
import org.apache.hudi.client.transaction.lock.models.LockGetResult;
import org.apache.hudi.client.transaction.lock.models.LockUpsertResult;
import org.apache.hudi.client.transaction.lock.models.StorageLockData;
import org.apache.hudi.client.transaction.lock.models.StorageLockFile;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.common.util.collection.Pair;
import org.apache.hudi.exception.HoodieLockException;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Properties;

/**
 * The S3 half of Hudi's storage-based lock (RFC-91), through Hadoop's S3A: the lock is one object, created only if
 * absent (If-None-Match: *) and renewed or released only if unchanged since it was read (If-Match: its ETag).
 *
 * Hudi's StorageBasedLockProvider picks its client by the table's scheme, and for s3 and s3a names this class, which
 * Hudi ships in hudi-aws over an AWS SDK that reaches only AWS. This one asks the table's own S3A file system for its
 * S3 client, so the lock goes where the table goes with the same endpoint, path style and credentials (MinIO and other
 * S3-compatible stores included). Do not put hudi-aws's bundle on the same classpath: one of the two would be loaded.
 *
 * A store that is away is not an answer about the lock: reads and writes that reach no store report an unknown
 * result, which Hudi's provider and lock manager retry (hoodie.write.lock.num_retries and its waits).
 */
public class S3StorageLockClient implements StorageLockClient {

  private static final Logger LOG = LoggerFactory.getLogger(S3StorageLockClient.class);
  private static final int PRECONDITION_FAILED = 412;
  private static final int NOT_FOUND = 404;
  private static final int CONFLICT = 409;
  private static final int THROTTLED = 429;

  private final String ownerId;
  private final String bucket;
  private final String key;
  private final AmazonS3 s3;

  /** As Hudi's provider constructs it, by reflection: the owner's id, the lock object's URI, the lock's settings. */
  public S3StorageLockClient(String ownerId, String lockFileUri, Properties props) {
    Pair<String, String> bucketAndKey = StorageLockClient.parseBucketAndPath(lockFileUri);
    this.ownerId = ownerId;
    this.bucket = bucketAndKey.getLeft();
    this.key = bucketAndKey.getRight();
    this.s3 = s3aClient(lockFileUri);
  }

  /** The S3 client of the S3A file system that serves `uri`, configured as the running Spark's Hadoop settings say. */
  private static AmazonS3 s3aClient(String uri) {
    scala.Option<SparkSession> session = SparkSession.getActiveSession();
    if (session.isEmpty()) {
      session = SparkSession.getDefaultSession();
    }
    Configuration conf = session.isDefined() ? session.get().sparkContext().hadoopConfiguration() : new Configuration();
    try {
      FileSystem fs = new Path(URI.create(uri)).getFileSystem(conf);
      if (!(fs instanceof S3AFileSystem)) {
        throw new HoodieLockException("the storage-based lock at " + uri + " needs Hadoop's S3A file system, not "
            + fs.getClass().getName());
      }
      return ((S3AFileSystem) fs).getAmazonS3ClientForTesting("Hudi's storage-based lock");
    } catch (IOException e) {
      throw new HoodieLockException("cannot open the store of the storage-based lock at " + uri, e);
    }
  }

  @Override
  public Pair<LockGetResult, Option<StorageLockFile>> readCurrentLockFile() {
    try (S3Object object = s3.getObject(bucket, key)) {
      String eTag = object.getObjectMetadata().getETag();
      return Pair.of(LockGetResult.SUCCESS, Option.of(StorageLockFile.createFromStream(object.getObjectContent(), eTag)));
    } catch (AmazonS3Exception e) {
      if (e.getStatusCode() == NOT_FOUND) {
        return Pair.of(LockGetResult.NOT_EXISTS, Option.empty());
      }
      if (e.getStatusCode() == CONFLICT || e.getStatusCode() == THROTTLED || e.getStatusCode() >= 500) {
        LOG.warn("Owner {}: the store did not give the lock {} now ({}), trying again", ownerId, key, e.getStatusCode());
        return Pair.of(LockGetResult.UNKNOWN_ERROR, Option.empty());
      }
      throw e;
    } catch (SdkClientException e) {
      LOG.warn("Owner {}: the store holding the lock {} is away ({}), trying again", ownerId, key, e.getMessage());
      return Pair.of(LockGetResult.UNKNOWN_ERROR, Option.empty());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the lock " + key, e);
    }
  }

  @Override
  public Pair<LockUpsertResult, Option<StorageLockFile>> tryUpsertLockFile(
      StorageLockData lock, Option<StorageLockFile> previous) {
    byte[] body = StorageLockFile.toByteArray(lock);
    ObjectMetadata metadata = new ObjectMetadata();
    metadata.setContentLength(body.length);
    metadata.setContentType("application/json");
    PutObjectRequest put = new PutObjectRequest(bucket, key, new ByteArrayInputStream(body), metadata);
    // a new lock only where none is, a renewal or release only of the object this owner last wrote
    if (previous.isPresent()) {
      put.putCustomRequestHeader("If-Match", previous.get().getVersionId());
    } else {
      put.putCustomRequestHeader("If-None-Match", "*");
    }
    try {
      PutObjectResult written = s3.putObject(put);
      return Pair.of(LockUpsertResult.SUCCESS, Option.of(new StorageLockFile(lock, written.getETag())));
    } catch (AmazonS3Exception e) {
      if (e.getStatusCode() == PRECONDITION_FAILED) {
        return Pair.of(LockUpsertResult.ACQUIRED_BY_OTHERS, Option.empty());
      }
      if (e.getStatusCode() == THROTTLED) {
        return Pair.of(LockUpsertResult.THROTTLED, Option.empty());
      }
      LOG.warn("Owner {}: the store refused to write the lock {} ({})", ownerId, key, e.getStatusCode());
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    } catch (SdkClientException e) {
      LOG.warn("Owner {}: the store holding the lock {} is away ({}), trying again", ownerId, key, e.getMessage());
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    }
  }

  @Override
  public Option<String> readObject(String uri, boolean checkExistsFirst) {
    Pair<String, String> bucketAndKey = StorageLockClient.parseBucketAndPath(uri);
    try (S3Object object = s3.getObject(bucketAndKey.getLeft(), bucketAndKey.getRight());
         InputStream in = object.getObjectContent()) {
      return Option.of(new String(readAll(in), StandardCharsets.UTF_8));
    } catch (AmazonS3Exception e) {
      if (e.getStatusCode() != NOT_FOUND) {
        LOG.warn("Owner {}: cannot read {} ({})", ownerId, uri, e.getStatusCode());
      }
      return Option.empty();
    } catch (IOException | SdkClientException e) {
      LOG.warn("Owner {}: cannot read {} ({})", ownerId, uri, e.getMessage());
      return Option.empty();
    }
  }

  @Override
  public boolean writeObject(String uri, String content) {
    Pair<String, String> bucketAndKey = StorageLockClient.parseBucketAndPath(uri);
    try {
      s3.putObject(bucketAndKey.getLeft(), bucketAndKey.getRight(), content);
      return true;
    } catch (SdkClientException e) {
      LOG.warn("Owner {}: cannot write {} ({})", ownerId, uri, e.getMessage());
      return false;
    }
  }

  /** Nothing to close: the S3 client is the file system's, shared with every other use of the table. */
  @Override
  public void close() {}

  private static byte[] readAll(InputStream in) throws IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
      out.write(buffer, 0, n);
    }
    return out.toByteArray();
  }
}
