module.exports = require('./jest-temp-dir').teardown;
