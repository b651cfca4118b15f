"""The Spark session the benchmarks use: local[2], 2 shuffle partitions, quiet."""

from __future__ import annotations

import warnings


def session():  # noqa: ANN201 - pyspark is optional
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PySpark 4 warns that pandas 3 is not fully supported
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("recframe-bench")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.memory", "8g")
            .getOrCreate()
        )
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(1).collect()  # session start-up is not part of any timing
    return spark
