// The logical types of Kafka Connect's data model: a primitive schema with a well-known name, whose value is
// richer in memory than on the wire. Names and encodings are Kafka's, so that converted data reads the same in
// Kafka's tooling:
//   Decimal   bytes, parameter "scale": big-endian two's complement unscaled value; in memory a BigDecimal
//   Date      int32: days since 1970-01-01; in memory a Date at UTC midnight
//   Time      int32: milliseconds since midnight; in memory a Date on 1970-01-01 (UTC)
//   Timestamp int64: milliseconds since the epoch; in memory a Date

import { DataException } from '../errors.js';
import { BigDecimal, bigintToTwosComplement, twosComplementToBigint } from './big-decimal.js';
import { type Schema, SchemaBuilder } from './schema.js';

const MS_PER_DAY = 86_400_000;

export const Decimal = {
  LOGICAL_NAME: 'org.apache.kafka.connect.data.Decimal',
  SCALE_FIELD: 'scale',
  builder(scale: number): SchemaBuilder {
    return SchemaBuilder.bytes()
      .name(Decimal.LOGICAL_NAME)
      .parameter(Decimal.SCALE_FIELD, String(scale))
      .version(1);
  },
  schema(scale: number): Schema {
    return Decimal.builder(scale).build();
  },
  scaleOf(schema: Schema): number {
    const text = schema.parameters?.[Decimal.SCALE_FIELD];
    if (text === undefined || !/^-?\d+$/.test(text)) {
      throw new DataException('Invalid Decimal schema: scale parameter not found.');
    }
    return Number(text);
  },
  fromLogical(schema: Schema, value: BigDecimal): Buffer {
    const scale = Decimal.scaleOf(schema);
    if (value.scale !== scale) {
      throw new DataException(
        `BigDecimal has mismatching scale value for given Decimal schema (${value.scale} != ${scale})`,
      );
    }
    return bigintToTwosComplement(value.unscaled);
  },
  toLogical(schema: Schema, bytes: Buffer): BigDecimal {
    return new BigDecimal(twosComplementToBigint(bytes), Decimal.scaleOf(schema));
  },
};

export const ConnectDate = {
  LOGICAL_NAME: 'org.apache.kafka.connect.data.Date',
  builder(): SchemaBuilder {
    return SchemaBuilder.int32().name(ConnectDate.LOGICAL_NAME).version(1);
  },
  SCHEMA: SchemaBuilder.int32().name('org.apache.kafka.connect.data.Date').version(1).build(),
  fromLogical(_schema: Schema, value: Date): number {
    const ms = value.getTime();
    if (ms % MS_PER_DAY !== 0) {
      throw new DataException(
        'Kafka Connect Date type should not have any time fields set to non-zero values.',
      );
    }
    return ms / MS_PER_DAY;
  },
  toLogical(_schema: Schema, days: number): Date {
    return new Date(days * MS_PER_DAY);
  },
};

export const ConnectTime = {
  LOGICAL_NAME: 'org.apache.kafka.connect.data.Time',
  builder(): SchemaBuilder {
    return SchemaBuilder.int32().name(ConnectTime.LOGICAL_NAME).version(1);
  },
  SCHEMA: SchemaBuilder.int32().name('org.apache.kafka.connect.data.Time').version(1).build(),
  fromLogical(_schema: Schema, value: Date): number {
    const ms = value.getTime();
    if (ms < 0 || ms >= MS_PER_DAY) {
      throw new DataException(
        'Kafka Connect Time type should not have any date fields set to non-zero values.',
      );
    }
    return ms;
  },
  toLogical(_schema: Schema, ms: number): Date {
    if (ms < 0 || ms >= MS_PER_DAY) {
      throw new DataException(
        'Time values must use number of milliseconds greater than 0 and less than 86400000',
      );
    }
    return new Date(ms);
  },
};

export const ConnectTimestamp = {
  LOGICAL_NAME: 'org.apache.kafka.connect.data.Timestamp',
  builder(): SchemaBuilder {
    return SchemaBuilder.int64().name(ConnectTimestamp.LOGICAL_NAME).version(1);
  },
  SCHEMA: SchemaBuilder.int64().name('org.apache.kafka.connect.data.Timestamp').version(1).build(),
  fromLogical(_schema: Schema, value: Date): number {
    return value.getTime();
  },
  toLogical(_schema: Schema, ms: number | bigint): Date {
    return new Date(Number(ms));
  },
};

export const LOGICAL_NAMES = new Set([
  Decimal.LOGICAL_NAME,
  ConnectDate.LOGICAL_NAME,
  ConnectTime.LOGICAL_NAME,
  ConnectTimestamp.LOGICAL_NAME,
]);
