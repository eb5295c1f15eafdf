//! khata's LSM storage engine.
