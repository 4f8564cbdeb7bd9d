// See esm-require-bridge.cjs: the ES modules that CommonJS dependencies require, as this test file's registry holds them.
import * as common from '@nestjs/common';
import * as core from '@nestjs/core';

globalThis[Symbol.for('attestly.jest.esm')] = { '@nestjs/common': common, '@nestjs/core': core };
