"""pipeline/sqltext.py builds the same expressions as PySpark's Column API.

Each case builds one expression twice, with ``pyspark.sql.functions`` and with
``pipeline.sqltext``, evaluates both over the same rows and requires the same
values and the same type (field names and nullability included). A
difference in quoting, in operator grouping, in a struct's field names or in a
literal's type fails here before it could change what a reader extracts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType

from pipeline import sqltext as S

ROWS = [
    (1, "a'b\\c", [1, 2, 3], {"k": 5}, '{"x": 7, "y": [1, 2]}', None),
    (-4, 'Completed request:{"a":1} \\d+ \u00e9\n', [], {}, "{bad", "t"),
    (None, None, None, None, None, "u"),
    (2147483, "[t,0] 12:34", [4, None], {"k": None}, '{"x": null}', ""),
]
SCHEMA = StructType(
    [
        StructField("n", IntegerType()),
        StructField("s", StringType()),
        StructField("arr", ArrayType(IntegerType())),
        StructField("m", StructType([StructField("k", IntegerType())])),
        StructField("j", StringType()),
        StructField("t", StringType()),
    ]
)


@pytest.fixture(scope="module")
def frame(spark: Any) -> DataFrame:
    rows = [(n, s, a, None if m is None else (m.get("k"),), j, t) for n, s, a, m, j, t in ROWS]
    return spark.createDataFrame(rows, SCHEMA)  # type: ignore[no-any-return]


Build = Callable[[Any], Column]

CASES: dict[str, Build] = {
    # literals: quotes, backslashes, unicode, newlines, numbers' types
    "string literals": lambda f: f.concat(f.col("s"), f.lit("'\\\"%_\u00e9\n\t")),
    "int literals": lambda f: f.array(f.lit(0), f.lit(-1), f.lit(2**31), f.lit(-(2**40))),
    "float and bool literals": lambda f: f.array(f.lit(1.5), f.lit(-0.25)).alias("x"),
    "null literal": lambda f: f.coalesce(f.col("t"), f.lit(None)),
    "bool literal": lambda f: f.lit(True) & f.col("n").isNotNull(),
    # operators and their grouping
    "arithmetic": lambda f: (f.col("n") + 1) * 2 - f.col("n") % 3 / 2,
    "reflected arithmetic": lambda f: 10 - f.col("n") * -1,
    "unary minus": lambda f: -f.col("n") + 1,
    "comparisons": lambda f: f.array(
        f.col("n") == 1, f.col("n") != 1, f.col("n") < 0, f.col("n") >= 2, f.col("n") <= -4
    ),
    "logic": lambda f: (f.col("n") > 0) & ~(f.col("s").isNull() | (f.col("n") == 2)),
    "null-safe equality": lambda f: f.col("n").eqNullSafe(None),
    "isin": lambda f: f.col("n").isin(1, 2, -4),
    "isin of a list": lambda f: f.col("t").isin(["t", "u"]),
    "between": lambda f: f.col("n").between(-5, 1),
    "string tests": lambda f: f.array(
        f.col("s").startswith("Comp"), f.col("s").endswith("\n"), f.col("s").contains("'")
    ),
    "rlike with a regex": lambda f: f.col("s").rlike(r"^\[t,\d+\] \d{2}:"),
    # CASE WHEN
    "when chain": lambda f: f.when(f.col("n") > 0, "pos").when(f.col("n") < 0, f.lit("neg")),
    "when otherwise": lambda f: f.when(f.col("n").isNull(), -1).otherwise(f.col("n")),
    # access
    "array index": lambda f: f.when(f.size("arr") > 1, f.col("arr")[1]),
    "struct field": lambda f: f.col("m")["k"],
    "dotted name": lambda f: f.col("m.k") + 1,
    "get": lambda f: f.get(f.col("arr"), 0),
    "try_element_at": lambda f: f.try_element_at(f.col("arr"), f.lit(2)),
    "size": lambda f: f.size("arr"),
    "substr": lambda f: f.col("s").substr(2, 5),
    "substring": lambda f: f.substring("s", 1, 3),
    # structs name their fields as CreateStruct does
    "struct names": lambda f: f.struct(
        f.col("n"), f.col("m.k"), f.col("m")["k"], f.col("s").alias("renamed"), f.lit(1), "t"
    ),
    "array of structs": lambda f: f.array(f.struct(f.col("n").alias("a"), f.lit("x").alias("b"))),
    # types
    "cast": lambda f: f.array(f.col("n").cast("string"), f.lit("12").cast("int").cast("string")),
    "cast to a type object": lambda f: f.col("n").cast(LongType()),
    "cast to a struct type": lambda f: f.struct(f.col("n").alias("a")).cast(
        StructType([StructField("a", LongType())])
    ),
    "cast to never-null elements": lambda f: f.array_compact(f.col("arr")).cast(
        ArrayType(LongType(), containsNull=False)
    ),
    "null cast to never-null elements": lambda f: f.lit(None).cast(
        ArrayType(IntegerType(), containsNull=False)
    ),
    "try_cast": lambda f: f.col("s").try_cast("bigint"),
    # functions with literal and column arguments
    "regexp_extract": lambda f: f.regexp_extract("s", r"(\d+):(\d+)", 2),
    "regexp_replace": lambda f: f.regexp_replace(f.col("s"), r"\\", "/"),
    "split with a limit": lambda f: f.split(f.col("s"), ",", 2),
    "split at a regex": lambda f: f.split("s", r"\s+"),
    "instr": lambda f: f.instr(f.col("s"), "request"),
    "substring_index": lambda f: f.substring_index("s", ":", -1),
    "format_string": lambda f: f.format_string("%s=%d", f.col("t"), f.col("n")),
    "array_join": lambda f: f.array_join(f.col("arr"), ",", "?"),
    "nullif": lambda f: f.nullif(f.col("t"), f.lit("")),
    "trims": lambda f: f.array(f.trim("s"), f.ltrim(f.col("s")), f.rtrim(f.col("s"))),
    "lengths": lambda f: f.array(f.length("s"), f.octet_length(f.col("s"))),
    "least and greatest": lambda f: f.array(
        f.least("n", f.lit(0)), f.greatest(f.col("n"), f.lit(0))
    ),
    "replace": lambda f: f.replace(f.col("s"), f.lit("a"), f.lit("b")),
    "url_decode": lambda f: f.url_decode(f.replace(f.col("t"), f.lit("+"), f.lit("%2B"))),
    "floor": lambda f: f.floor(f.col("n") / 3),
    "timestamps": lambda f: f.array(f.timestamp_millis(f.col("n")), f.timestamp_micros("n")),
    "try_to_timestamp": lambda f: f.try_to_timestamp(f.col("t"), f.lit("yyyy-MM-dd")),
    "flatten and compact": lambda f: f.array_compact(f.flatten(f.array(f.col("arr"), "arr"))),
    "from_json with options": lambda f: f.from_json(
        f.col("j"),
        "x INT, y ARRAY<INT>, _corrupt STRING",
        {"columnNameOfCorruptRecord": "_corrupt", "mode": "PERMISSIVE"},
    ),
    "from_json with a schema object": lambda f: f.from_json(
        "j", StructType([StructField("x", IntegerType())])
    ),
    "utf8": lambda f: f.array(f.is_valid_utf8("s").cast("string"), f.make_valid_utf8("s")),
    # higher-order functions, variables named like columns included
    "transform": lambda f: f.transform(f.col("arr"), lambda x: x + f.col("n")),
    "transform with the index": lambda f: f.transform("arr", lambda x, i: x * i),
    "filter": lambda f: f.filter(f.col("arr"), lambda n: n.isNotNull() & (n > 1)),
    "filter with the index": lambda f: f.filter(f.col("arr"), lambda _, i: i > 0),
    "exists": lambda f: f.exists(f.col("arr"), lambda s: s == 3),
    "nested lambdas": lambda f: f.transform(
        f.array(f.col("arr"), f.col("arr")),
        lambda a, i: f.transform(a, lambda x: f.struct(x.alias("v"), i.alias("i"))),
    ),
    "a lambda's structs": lambda f: f.transform(
        f.col("arr"), lambda p: f.struct(p.alias("p"), f.col("t"), f.col("m")["k"])
    ),
}


def _both(frame: DataFrame, build: Build) -> tuple[DataFrame, DataFrame]:
    return frame.select(build(F).alias("v")), frame.select(build(S).alias("v"))


def optimized(df: DataFrame) -> str:
    """A frame's optimised plan, with what differs only in name made equal:
    expression ids, lambda variables' names, the name a struct's or a
    substring's constructor prints, and the order of from_json's options (a
    map)."""
    plan = str(df._jdf.queryExecution().optimizedPlan().toString())
    plan = re.sub(r"#\d+L?", "#", plan)
    plan = re.sub(r"lambda \w+#", "lambda #", plan)
    plan = plan.replace("named_struct(", "struct(").replace("substring(", "substr(")
    return re.sub(
        r"(\(\w+,[^()]*\)(?:, )?)+",
        lambda m: (
            ", ".join(sorted(p.strip(", ") for p in re.findall(r"\(\w+,[^()]*\)", m[0])))
            + (", " if m[0].endswith(", ") else "")
        ),
        plan,
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_sql_text_column_equals_pysparks(frame: DataFrame, name: str) -> None:
    """The same values and type, and the same optimised plan: an expression
    that gives equal values but costs more per row (one the optimiser can no
    longer fold, say) is a difference too."""
    ours_built = CASES[name](S)
    assert isinstance(ours_built, Column)
    theirs, ours = _both(frame, CASES[name])
    assert ours.schema == theirs.schema
    assert ours.collect() == theirs.collect()
    assert optimized(ours) == optimized(theirs)


def test_columns_are_sql_text_until_a_dataframe_reads_them() -> None:
    built = S.when(S.col("a").isin(1, 2), S.lit("it's")).otherwise(S.col("b.c")[0])
    assert isinstance(built, S.Sql)
    assert built._java is None  # no JVM object yet
    assert built._text == ("CASE WHEN (`a` IN (1, 2)) THEN 'it\\'s' ELSE `b`.`c`[0] END")


def test_a_real_column_falls_back_to_pyspark(frame: DataFrame) -> None:
    """A JVM column (a window function, PySpark's own) cannot be spelled in
    SQL text: the expression is then built by PySpark, with the same result."""
    real = F.col("n") + 1
    mixed = [
        S.col("n") - real,
        S.when(S.col("n") > 0, real).otherwise(S.lit(0)),
        S.when(S.col("n") > 0, S.lit(1)).otherwise(real),
        S.coalesce(S.col("n"), real),
        S.col("n").isin(real, 2),
        S.col("s").substr(real, F.lit(2)),
    ]
    plain = [
        F.col("n") - real,
        F.when(F.col("n") > 0, real).otherwise(F.lit(0)),
        F.when(F.col("n") > 0, F.lit(1)).otherwise(real),
        F.coalesce(F.col("n"), real),
        F.col("n").isin(real, 2),
        F.col("s").substr(real, F.lit(2)),
    ]
    for ours, theirs in zip(mixed, plain, strict=True):
        assert frame.select(ours.alias("v")).collect() == frame.select(theirs.alias("v")).collect()


def test_a_lambda_variable_never_becomes_a_column() -> None:
    """Inside a lambda only SQL text can hold its variable: a PySpark fallback
    there would resolve the variable as a column of the same name."""
    with pytest.raises(TypeError, match="lambda variable"):
        S.transform(S.col("arr"), lambda x: x + F.lit(1))


def test_a_struct_field_that_is_a_bare_lambda_variable_must_be_named() -> None:
    """PySpark names it after its own generated variable name: not a name a
    reader can rely on, so SQL text refuses to guess one."""
    with pytest.raises(ValueError, match="alias"):
        S.transform(S.col("arr"), lambda p: S.struct(p))
