// Render: filled in by the next commit.
