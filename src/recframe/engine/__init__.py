"""The engine: one call prepared (options, validation, inputs), the narwhals plan, the data checks, side inputs and the backends."""
