"""Tables, plots and comparisons of kept results."""
