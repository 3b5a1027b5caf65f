"""The saved replay state of incremental runs (``--state DIR``)."""

from __future__ import annotations

from pyspark.sql.types import IntegerType, StringType, StructField, StructType

#: One row per partition: its replay history (replay.codec JSON) at the end
#: of the run that wrote it.
PARTITION_STATE = StructType(
    [
        StructField("cluster", StringType(), False),
        StructField("topic_key", StringType(), False),
        StructField("topic", StringType(), True),
        StructField("topic_id", StringType(), True),
        StructField("partition", IntegerType(), False),
        StructField("state", StringType(), False),
    ]
)
