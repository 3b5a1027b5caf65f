"""Column expressions built as Spark SQL text, not over py4j.

PySpark's classic ``Column`` API builds every expression node in the driver
JVM: ``F.col("a")`` is a py4j round trip to look up ``functions``, one to
call it, and one more when Python frees the reference. The readers' plans are
thousands of nodes, so building them cost the README demo about 20,000 round
trips, each 150-300 us on this project's machine while the JVM starts up
(docs/performance.md, "Plans built as SQL text").

This module offers the part of ``pyspark.sql.functions`` and of ``Column``
that the pipeline's plans use, with the same names and argument conventions
(a ``str`` where PySpark takes "ColumnOrName" is a column name; where it takes
a plain ``str`` it is a literal). Each call only composes SQL text in Python;
a column becomes a JVM ``Column`` once, when a DataFrame method reads its
``_jc`` (``functions.expr`` parses the text: one round trip for a whole
expression tree). The parsed expression is the one the Column API builds:
the parser and the API make the same unresolved nodes (``struct`` names its
fields as ``CreateStruct`` does, aliases inside an expression are dropped as
the analyser drops them).

Anything not offered here falls back to PySpark itself: an unknown function
name is looked up in ``pyspark.sql.functions``, an unknown ``Column`` method
is the parent's, and both take these columns as they take any other. A lambda
variable (``transform``, ``filter``, ``exists``) exists only inside SQL text,
so a fallback that would need one as a JVM column raises instead of
resolving it as a column of the same name.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import functions as _F
from pyspark.sql.classic.column import Column as ClassicColumn
from pyspark.sql.column import Column
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
)

__all__ = ["Sql", "col", "lit", "when", "to_sql"]


def quote_name(name: str) -> str:
    """One identifier, backquoted (a backquote inside doubled)."""
    return "`" + name.replace("`", "``") + "`"


def _name_parts(name: str) -> list[str]:
    """``F.col``'s name in parts: split at dots outside backquotes (``F.col``
    reads "`a.b`" as one name)."""
    parts: list[str] = []
    current = ""
    quoted = False
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "`":
            if quoted and i + 1 < len(name) and name[i + 1] == "`":
                current += "`"
                i += 2
                continue
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += ch
        i += 1
    parts.append(current)
    return parts


def _column_path(name: str) -> str:
    """``F.col``'s name as SQL: its parts, each backquoted."""
    return ".".join(quote_name(p) for p in _name_parts(name))


def string_literal(value: str) -> str:
    """A Python string as a Spark SQL string literal: the parser unescapes
    backslash sequences, so every backslash and quote is escaped."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def type_sql(data_type: DataType | str) -> str:
    """A data type as SQL (struct field names backquoted)."""
    if isinstance(data_type, str):
        return data_type
    if isinstance(data_type, StructType):
        fields = ",".join(f"{quote_name(f.name)}:{type_sql(f.dataType)}" for f in data_type.fields)
        return f"struct<{fields}>"
    if isinstance(data_type, ArrayType):
        return f"array<{type_sql(data_type.elementType)}>"
    if isinstance(data_type, MapType):
        return f"map<{type_sql(data_type.keyType)},{type_sql(data_type.valueType)}>"
    return data_type.simpleString()


def type_expressible(data_type: DataType | str) -> bool:
    """Whether SQL type text says all of ``data_type``: it cannot say that an
    array's elements, a map's values or a struct's fields are never null."""
    if isinstance(data_type, str):
        return True
    if isinstance(data_type, StructType):
        return all(f.nullable and type_expressible(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return data_type.containsNull and type_expressible(data_type.elementType)
    if isinstance(data_type, MapType):
        return (
            data_type.valueContainsNull
            and type_expressible(data_type.keyType)
            and type_expressible(data_type.valueType)
        )
    return True


#: a never-null value of each atomic type, as SQL
_ZEROS: dict[type, str] = {
    IntegerType: "0",
    LongType: "0L",
    ShortType: "0S",
    ByteType: "0Y",
    StringType: "''",
    BooleanType: "false",
    DoubleType: "0D",
}


def _literal_sql(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -(2**63) <= value < 2**63:
            return f"({value})" if value < 0 else str(value)
        raise ValueError(f"integer literal out of range: {value}")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"CAST('{value}' AS DOUBLE)"
        return f"({value!r}D)" if value < 0 else f"{value!r}D"
    if isinstance(value, str):
        return string_literal(value)
    raise TypeError(f"no SQL literal for {type(value).__name__} {value!r}")


class Sql(ClassicColumn):
    """A column as SQL text; its JVM ``Column`` is made on first use."""

    def __init__(
        self,
        text: str,
        name: str | None = None,
        alias: str | None = None,
        lambda_var: bool = False,
    ) -> None:
        # every attribute set here: Column.__getattr__ reads a missing one as
        # a struct field
        self._text = text
        #: the field name ``struct`` gives it (CreateStruct), if any
        self._name = name
        self._alias = alias
        self._lambda_var = lambda_var
        self._java: Any = None

    @property
    def _jc(self) -> Any:
        if self._java is None:
            if self._lambda_var or any(v in self._text for v in _OPEN_LAMBDAS):
                raise TypeError(
                    "a lambda variable was used outside SQL text (a function pipeline.sqltext "
                    "does not offer was called inside transform/filter/exists)"
                )
            self._java = _F.expr(self.top_sql())._jc
        return self._java

    def top_sql(self) -> str:
        """The text as a select item (with its alias)."""
        if self._alias is None:
            return self._text
        return f"{self._text} AS {self._alias}"

    def __repr__(self) -> str:
        return f"Sql<{self.top_sql()}>"

    # --- arithmetic and logic -------------------------------------------------

    def _bin(self, op: str, other: Any, reverse: bool = False) -> Column:
        left, right = self._text, to_sql(other)
        if reverse:
            left, right = right, left
        return Sql(f"({left} {op} {right})")

    def __add__(self, other: Any) -> Column:
        return (
            self._bin("+", other)
            if _sql_able(other)
            else ClassicColumn.__add__(_real(self), _real(other))
        )

    def __radd__(self, other: Any) -> Column:
        return (
            self._bin("+", other, True)
            if _sql_able(other)
            else ClassicColumn.__radd__(_real(self), _real(other))
        )

    def __sub__(self, other: Any) -> Column:
        return (
            self._bin("-", other)
            if _sql_able(other)
            else ClassicColumn.__sub__(_real(self), _real(other))
        )

    def __rsub__(self, other: Any) -> Column:
        return (
            self._bin("-", other, True)
            if _sql_able(other)
            else ClassicColumn.__rsub__(_real(self), _real(other))
        )

    def __mul__(self, other: Any) -> Column:
        return (
            self._bin("*", other)
            if _sql_able(other)
            else ClassicColumn.__mul__(_real(self), _real(other))
        )

    def __rmul__(self, other: Any) -> Column:
        return (
            self._bin("*", other, True)
            if _sql_able(other)
            else ClassicColumn.__rmul__(_real(self), _real(other))
        )

    def __truediv__(self, other: Any) -> Column:
        return (
            self._bin("/", other)
            if _sql_able(other)
            else ClassicColumn.__truediv__(_real(self), _real(other))
        )

    def __rtruediv__(self, other: Any) -> Column:
        if _sql_able(other):
            return self._bin("/", other, True)
        return ClassicColumn.__rtruediv__(_real(self), _real(other))

    def __mod__(self, other: Any) -> Column:
        return (
            self._bin("%", other)
            if _sql_able(other)
            else ClassicColumn.__mod__(_real(self), _real(other))
        )

    def __rmod__(self, other: Any) -> Column:
        return (
            self._bin("%", other, True)
            if _sql_able(other)
            else ClassicColumn.__rmod__(_real(self), _real(other))
        )

    def __neg__(self) -> Column:
        return Sql(f"(- {self._text})")

    def __eq__(self, other: Any) -> Column:  # type: ignore[override]
        return (
            self._bin("=", other)
            if _sql_able(other)
            else ClassicColumn.__eq__(_real(self), _real(other))
        )

    def __ne__(self, other: Any) -> Column:  # type: ignore[override]
        if _sql_able(other):
            return Sql(f"(NOT ({self._text} = {to_sql(other)}))")
        return ClassicColumn.__ne__(_real(self), _real(other))

    def __lt__(self, other: Any) -> Column:
        return (
            self._bin("<", other)
            if _sql_able(other)
            else ClassicColumn.__lt__(_real(self), _real(other))
        )

    def __le__(self, other: Any) -> Column:
        return (
            self._bin("<=", other)
            if _sql_able(other)
            else ClassicColumn.__le__(_real(self), _real(other))
        )

    def __gt__(self, other: Any) -> Column:
        return (
            self._bin(">", other)
            if _sql_able(other)
            else ClassicColumn.__gt__(_real(self), _real(other))
        )

    def __ge__(self, other: Any) -> Column:
        return (
            self._bin(">=", other)
            if _sql_able(other)
            else ClassicColumn.__ge__(_real(self), _real(other))
        )

    def __and__(self, other: Any) -> Column:
        return (
            self._bin("AND", other)
            if _sql_able(other)
            else ClassicColumn.__and__(_real(self), _real(other))
        )

    def __rand__(self, other: Any) -> Column:
        return (
            self._bin("AND", other, True)
            if _sql_able(other)
            else ClassicColumn.__rand__(_real(self), _real(other))
        )

    def __or__(self, other: Any) -> Column:
        return (
            self._bin("OR", other)
            if _sql_able(other)
            else ClassicColumn.__or__(_real(self), _real(other))
        )

    def __ror__(self, other: Any) -> Column:
        return (
            self._bin("OR", other, True)
            if _sql_able(other)
            else ClassicColumn.__ror__(_real(self), _real(other))
        )

    def __invert__(self) -> Column:
        return Sql(f"(NOT {self._text})")

    def eqNullSafe(self, other: Any) -> Column:  # noqa: N802  (PySpark's name)
        return (
            self._bin("<=>", other)
            if _sql_able(other)
            else ClassicColumn.eqNullSafe(_real(self), _real(other))
        )

    def bitwiseAND(self, other: Any) -> Column:  # noqa: N802
        return (
            self._bin("&", other)
            if _sql_able(other)
            else ClassicColumn.bitwiseAND(_real(self), _real(other))
        )

    # --- predicates -------------------------------------------------------------

    def isNull(self) -> Column:  # noqa: N802
        return Sql(f"({self._text} IS NULL)")

    def isNotNull(self) -> Column:  # noqa: N802
        return Sql(f"({self._text} IS NOT NULL)")

    def isin(self, *cols: Any) -> Column:
        values = list(cols[0]) if len(cols) == 1 and isinstance(cols[0], list | set) else list(cols)
        if not values or not all(_sql_able(v) for v in values):
            return ClassicColumn.isin(_real(self), *_reals(cols))
        return Sql(f"({self._text} IN ({', '.join(to_sql(v) for v in values)}))")

    def between(self, lowerBound: Any, upperBound: Any) -> Column:  # noqa: N803
        # as PySpark spells it: (x >= lower) AND (x <= upper)
        both: Column = (self >= lowerBound) & (self <= upperBound)
        return both

    def startswith(self, other: Any) -> Column:
        if not _sql_able(other):
            return ClassicColumn.startswith(_real(self), _real(other))
        return Sql(f"startswith({self._text}, {to_sql(other)})")

    def endswith(self, other: Any) -> Column:
        if not _sql_able(other):
            return ClassicColumn.endswith(_real(self), _real(other))
        return Sql(f"endswith({self._text}, {to_sql(other)})")

    def contains(self, other: Any) -> Column:
        if not _sql_able(other):
            return ClassicColumn.contains(_real(self), _real(other))
        return Sql(f"contains({self._text}, {to_sql(other)})")

    def rlike(self, other: str) -> Column:
        return Sql(f"({self._text} RLIKE {string_literal(other)})")

    def like(self, other: str) -> Column:
        return Sql(f"({self._text} LIKE {string_literal(other)})")

    # --- access, names and types ------------------------------------------------

    def __getitem__(self, k: Any) -> Column:
        if isinstance(k, slice) or not _sql_able(k):
            return ClassicColumn.__getitem__(_real(self), _real(k))
        name = k if isinstance(k, str) else None
        return Sql(f"{self._text}[{to_sql(k)}]", name=name)

    def getItem(self, key: Any) -> Column:  # noqa: N802
        return self[key]

    def getField(self, name: Any) -> Column:  # noqa: N802
        return (
            self[name]
            if isinstance(name, str)
            else ClassicColumn.getField(_real(self), _real(name))
        )

    def substr(self, startPos: Any, length: Any) -> Column:  # noqa: N803
        if not (_sql_able(startPos) and _sql_able(length)):
            return ClassicColumn.substr(_real(self), _real(startPos), _real(length))
        return Sql(f"substring({self._text}, {to_sql(startPos)}, {to_sql(length)})")

    def alias(self, *alias: str, **kwargs: Any) -> Column:
        if kwargs:
            return ClassicColumn.alias(_real(self), *_reals(alias), **kwargs)
        if len(alias) == 1:
            return Sql(self._text, name=alias[0], alias=quote_name(alias[0]))
        names = ", ".join(quote_name(a) for a in alias)
        return Sql(self._text, alias=f"({names})")

    def name(self, *alias: str, **kwargs: Any) -> Column:
        return self.alias(*alias, **kwargs)

    def cast(self, dataType: DataType | str) -> Column:  # noqa: N803
        if self._text == "NULL" and isinstance(dataType, ArrayType) and not dataType.containsNull:
            element = _ZEROS.get(type(dataType.elementType))
            if element is not None:
                # a null array of never-null elements, as a constant: the
                # branch not taken gives the type (array(0) holds no null)
                return Sql(f"if(false, array({element}), NULL)")
        if not type_expressible(dataType):
            return ClassicColumn.cast(_real(self), dataType)
        return Sql(f"CAST({self._text} AS {type_sql(dataType)})")

    def astype(self, dataType: DataType | str) -> Column:  # noqa: N803
        return self.cast(dataType)

    def try_cast(self, dataType: DataType | str) -> Column:  # noqa: N803
        if not type_expressible(dataType):
            return ClassicColumn.try_cast(_real(self), dataType)
        return Sql(f"TRY_CAST({self._text} AS {type_sql(dataType)})")


class SqlWhen(Sql):
    """``when(...)[.when(...)].otherwise(...)``: a CASE WHEN in the making.
    The branches are kept as given, so that a branch SQL text cannot spell
    (a JVM column) rebuilds the whole chain with PySpark's ``when``."""

    def __init__(self, branches: list[tuple[Any, Any]], otherwise: Any = None) -> None:
        text = "CASE " + " ".join(f"WHEN {to_sql(c)} THEN {to_sql(v)}" for c, v in branches)
        text += f" ELSE {to_sql(otherwise)} END" if otherwise is not None else " END"
        super().__init__(text)
        self._branches = branches
        self._otherwise = otherwise

    def _pyspark(self) -> Column:
        (condition, value), *rest = self._branches
        chain = _F.when(_real(condition), _real(value))
        for condition, value in rest:
            chain = chain.when(_real(condition), _real(value))
        return chain

    def when(self, condition: Any, value: Any) -> Column:
        if self._otherwise is not None:
            return ClassicColumn.when(_real(self), _real(condition), _real(value))
        if not (_sql_able(condition) and _sql_able(value)):
            return self._pyspark().when(_real(condition), _real(value))
        return SqlWhen([*self._branches, (condition, value)])

    def otherwise(self, value: Any) -> Column:
        if self._otherwise is not None:
            return ClassicColumn.otherwise(_real(self), _real(value))
        if not _sql_able(value):
            return self._pyspark().otherwise(_real(value))
        return SqlWhen(self._branches, value)


def _real(value: Any) -> Any:
    """A PySpark fallback's argument: one of these columns as a plain JVM
    ``Column`` (PySpark compares argument types exactly in places)."""
    return ClassicColumn(value._jc) if isinstance(value, Sql) else value


def _reals(values: Any) -> list[Any]:
    return [_real(v) for v in values]


def _sql_able(value: Any) -> bool:
    """Whether a value can be spelled in SQL text: one of these columns, or a
    literal (a real JVM Column cannot)."""
    if isinstance(value, Sql):
        return True
    if isinstance(value, Column):
        return False
    return value is None or isinstance(value, bool | int | float | str)


def to_sql(value: Any) -> str:
    """A column's text (its alias dropped: inside an expression the analyser
    drops it too) or a literal's."""
    if isinstance(value, Sql):
        return value._text
    return _literal_sql(value)


def _col_sql(value: Any) -> str:
    """A "ColumnOrName" argument: a ``str`` is a column name."""
    if isinstance(value, str):
        return _column_path(value)
    return to_sql(value)


def _names_able(*values: Any) -> bool:
    return all(isinstance(v, str) or _sql_able(v) for v in values)


# --- functions ------------------------------------------------------------------


def col(name: str) -> Column:
    parts = _name_parts(name)
    return Sql(".".join(quote_name(p) for p in parts), name=parts[-1])


column = col


def lit(value: Any) -> Column:
    if isinstance(value, Sql):
        return value
    if not _sql_able(value):
        return _F.lit(value)
    return Sql(_literal_sql(value))


def expr(text: str) -> Column:
    return Sql(f"({text})")


def when(condition: Any, value: Any) -> Column:
    if not (_sql_able(condition) and _sql_able(value)):
        return _F.when(condition, value)
    return SqlWhen([(condition, value)])


def _call(fn: str, *args: str) -> Column:
    return Sql(f"{fn}({', '.join(args)})")


def _over_columns(fn: str, *cols: Any) -> Column:
    """A function whose arguments are all "ColumnOrName"."""
    if not _names_able(*cols):
        return getattr(_F, fn)(*cols)  # type: ignore[no-any-return]
    return _call(fn, *[_col_sql(c) for c in cols])


def _unpack(cols: tuple[Any, ...]) -> tuple[Any, ...]:
    if len(cols) == 1 and isinstance(cols[0], list | tuple):
        return tuple(cols[0])
    return cols


def coalesce(*cols: Any) -> Column:
    return _over_columns("coalesce", *cols)


def concat(*cols: Any) -> Column:
    return _over_columns("concat", *cols)


def least(*cols: Any) -> Column:
    return _over_columns("least", *cols)


def greatest(*cols: Any) -> Column:
    return _over_columns("greatest", *cols)


def nullif(col1: Any, col2: Any) -> Column:
    return _over_columns("nullif", col1, col2)


def size(col: Any) -> Column:
    return _over_columns("size", col)


def flatten(col: Any) -> Column:
    return _over_columns("flatten", col)


def length(col: Any) -> Column:
    return _over_columns("length", col)


def octet_length(col: Any) -> Column:
    return _over_columns("octet_length", col)


def lower(col: Any) -> Column:
    return _over_columns("lower", col)


def upper(col: Any) -> Column:
    return _over_columns("upper", col)


def is_valid_utf8(str: Any) -> Column:  # noqa: A002  (PySpark's name)
    return _over_columns("is_valid_utf8", str)


def make_valid_utf8(str: Any) -> Column:  # noqa: A002
    return _over_columns("make_valid_utf8", str)


def url_decode(str: Any) -> Column:  # noqa: A002
    return _over_columns("url_decode", str)


def timestamp_millis(col: Any) -> Column:
    return _over_columns("timestamp_millis", col)


def timestamp_micros(col: Any) -> Column:
    return _over_columns("timestamp_micros", col)


def array_compact(col: Any) -> Column:
    return _over_columns("array_compact", col)


def try_element_at(col: Any, extraction: Any) -> Column:
    return _over_columns("try_element_at", col, extraction)


def replace(src: Any, search: Any, replace: Any = None) -> Column:
    if replace is None:
        return _over_columns("replace", src, search)
    return _over_columns("replace", src, search, replace)


def _trim(fn: str, col: Any, trim: Any = None) -> Column:
    if trim is None:
        return _over_columns(fn, col)
    return _over_columns(fn, col, trim)


def trim(col: Any, trim: Any = None) -> Column:
    return _trim("trim", col, trim)


def ltrim(col: Any, trim: Any = None) -> Column:
    return _trim("ltrim", col, trim)


def rtrim(col: Any, trim: Any = None) -> Column:
    return _trim("rtrim", col, trim)


def try_to_timestamp(col: Any, format: Any = None) -> Column:  # noqa: A002
    if format is None:
        return _over_columns("try_to_timestamp", col)
    return _over_columns("try_to_timestamp", col, format)


def floor(col: Any, scale: Any = None) -> Column:
    if scale is None:
        return _over_columns("floor", col)
    if isinstance(scale, int):
        scale = lit(scale)
    return _over_columns("floor", col, scale)


def get(col: Any, index: Any) -> Column:
    if isinstance(index, int) and not isinstance(index, bool):
        index = lit(index)
    return _over_columns("get", col, index)


def array(*cols: Any) -> Column:
    return _over_columns("array", *_unpack(cols))


def struct(*cols: Any) -> Column:
    """``struct`` with each field named as ``CreateStruct`` names it: its
    alias, a column's last name part, an extracted field's key, else
    ``colN`` by position."""
    fields = _unpack(cols)
    if not _names_able(*fields):
        return _F.struct(*fields)
    parts = []
    for i, f in enumerate(fields):
        if isinstance(f, str):
            f = col(f)
        assert isinstance(f, Sql)
        if f._lambda_var and f._alias is None:
            raise ValueError(
                "alias a lambda variable in a struct (PySpark names the field after its own "
                "generated variable name)"
            )
        name = f._name if f._name is not None else f"col{i + 1}"
        parts.append(f"{string_literal(name)}, {f._text}")
    return Sql(f"named_struct({', '.join(parts)})")


def regexp_extract(str: Any, pattern: str, idx: int) -> Column:  # noqa: A002
    if not _names_able(str):
        return _F.regexp_extract(str, pattern, idx)
    return _call("regexp_extract", _col_sql(str), string_literal(pattern), _literal_sql(idx))


def regexp_replace(string: Any, pattern: Any, replacement: Any) -> Column:
    if not (_names_able(string) and _sql_able(pattern) and _sql_able(replacement)):
        return _F.regexp_replace(string, pattern, replacement)
    return _call("regexp_replace", _col_sql(string), to_sql(pattern), to_sql(replacement))


def split(str: Any, pattern: Any, limit: Any = -1) -> Column:  # noqa: A002
    if not (_names_able(str) and _sql_able(pattern)):
        return _F.split(str, pattern, limit)
    limit_sql = _literal_sql(limit) if isinstance(limit, int) else _col_sql(limit)
    return _call("split", _col_sql(str), to_sql(pattern), limit_sql)


def instr(str: Any, substr: Any) -> Column:  # noqa: A002
    if not (_names_able(str) and _sql_able(substr)):
        return _F.instr(str, substr)
    return _call("instr", _col_sql(str), to_sql(substr))


def substring(str: Any, pos: Any, len: Any) -> Column:  # noqa: A002
    pos = lit(pos) if isinstance(pos, int) else pos
    len = lit(len) if isinstance(len, int) else len  # noqa: A001
    return _over_columns("substring", str, pos, len)


def substring_index(str: Any, delim: str, count: int) -> Column:  # noqa: A002
    if not _names_able(str):
        return _F.substring_index(str, delim, count)
    return _call("substring_index", _col_sql(str), string_literal(delim), _literal_sql(count))


def format_string(format: str, *cols: Any) -> Column:  # noqa: A002
    if not _names_able(*cols):
        return _F.format_string(format, *cols)
    return _call("format_string", string_literal(format), *[_col_sql(c) for c in cols])


def array_join(col: Any, delimiter: str, null_replacement: str | None = None) -> Column:
    if not _names_able(col):
        return _F.array_join(col, delimiter, null_replacement)
    args = [_col_sql(col), string_literal(delimiter)]
    if null_replacement is not None:
        args.append(string_literal(null_replacement))
    return _call("array_join", *args)


def date_format(date: Any, format: str) -> Column:  # noqa: A002
    if not _names_able(date):
        return _F.date_format(date, format)
    return _call("date_format", _col_sql(date), string_literal(format))


def to_date(col: Any, format: str | None = None) -> Column:  # noqa: A002
    if not _names_able(col):
        return _F.to_date(col, format)
    if format is None:
        return _call("to_date", _col_sql(col))
    return _call("to_date", _col_sql(col), string_literal(format))


def array_sort(col: Any, comparator: Any = None) -> Column:
    if comparator is not None or not _names_able(col):
        return _F.array_sort(col, comparator)
    return _call("array_sort", _col_sql(col))


def from_json(col: Any, schema: Any, options: Mapping[str, str] | None = None) -> Column:
    if not _names_able(col) or not (
        isinstance(schema, str)
        or isinstance(schema, StructType | ArrayType | MapType)
        and type_expressible(schema)
    ):
        return _F.from_json(col, schema, options)
    schema_text = schema if isinstance(schema, str) else type_sql(schema)
    args = [_col_sql(col), string_literal(schema_text)]
    if options:
        pairs = ", ".join(
            f"{string_literal(k)}, {string_literal(str(v))}" for k, v in options.items()
        )
        args.append(f"map({pairs})")
    return _call("from_json", *args)


# --- higher-order functions -------------------------------------------------------

_LAMBDA_IDS = itertools.count(1)
#: the variables of the lambdas whose body is being built: a column holding
#: one cannot become a JVM column (the variable exists only in SQL text);
#: the names are unique, so a substring test finds them
_OPEN_LAMBDAS: list[str] = []


def _lambda(f: Callable[..., Any], max_args: int = 2) -> str:
    """``f`` as SQL lambda text, its variables fresh names (a variable is
    resolved before any column of the same name, but a fresh one meets none)."""
    import inspect

    parameters = [
        p
        for p in inspect.signature(f).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    count = len(parameters)
    if not 1 <= count <= max_args:
        raise ValueError(f"a lambda of 1 to {max_args} arguments, not {count}")
    names = [f"lv{next(_LAMBDA_IDS)}_{p.name.strip('_') or 'x'}" for p in parameters]
    _OPEN_LAMBDAS.extend(names)
    try:
        body = f(*[Sql(n, lambda_var=True) for n in names])
    finally:
        del _OPEN_LAMBDAS[-len(names) :]
    if not isinstance(body, Sql):
        raise TypeError(
            "a lambda's body must be built with pipeline.sqltext (it returned "
            f"{type(body).__name__})"
        )
    head = names[0] if count == 1 else f"({', '.join(names)})"
    return f"{head} -> {body._text}"


def _higher_order(fn: str, col: Any, f: Callable[..., Any], max_args: int) -> Column:
    if not _names_able(col):
        return getattr(_F, fn)(col, f)  # type: ignore[no-any-return]
    return _call(fn, _col_sql(col), _lambda(f, max_args))


def transform(col: Any, f: Callable[..., Any]) -> Column:
    return _higher_order("transform", col, f, 2)


def filter(col: Any, f: Callable[..., Any]) -> Column:  # noqa: A001  (PySpark's name)
    return _higher_order("filter", col, f, 2)


def exists(col: Any, f: Callable[..., Any]) -> Column:
    return _higher_order("exists", col, f, 1)


def forall(col: Any, f: Callable[..., Any]) -> Column:
    return _higher_order("forall", col, f, 1)


def __getattr__(name: str) -> Any:
    """Every other function is PySpark's own (it takes these columns)."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_F, name)
