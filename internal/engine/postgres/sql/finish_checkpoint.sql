-- The last step of a build: write the load's and the vacuum's dirty pages now, so that
-- a run's measurements do not include them.
CHECKPOINT
